package e2e

import (
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// A HookRun is one run of a command hook, as the client's debug log reports it:
//
//	... [DEBUG] Hooks: PostToolUse:Read ["$CLAUDE_PROJECT_DIR"/bin/detect] finished with status 0 (13ms)
//	... [DEBUG] Hooks: UserPromptSubmit ["$CLAUDE_PROJECT_DIR"/bin/detect] cancelled (77ms)
//
// The client cancels a hook still running when another hook of the same event has
// already decided (a UserPromptSubmit hook that blocks the prompt cancels its siblings).
type HookRun struct {
	Event     string // "PostToolUse", "Stop", "SubagentStop", ...
	Matcher   string // the tool for tool events ("Read"), else ""
	Command   string // the command as registered
	Status    int    // exit status; 0 when Cancelled
	Cancelled bool   // the client stopped waiting for it
	Duration  time.Duration
	End       time.Time // when the client logged the end of the run
}

// Start is when the run began, as far as the log tells.
func (h HookRun) Start() time.Time { return h.End.Add(-h.Duration) }

func (h HookRun) String() string {
	event := h.Event
	if h.Matcher != "" {
		event += ":" + h.Matcher
	}
	if h.Cancelled {
		return fmt.Sprintf("%s [%s] cancelled after %v", event, h.Command, h.Duration)
	}
	return fmt.Sprintf("%s [%s] status %d in %v", event, h.Command, h.Status, h.Duration)
}

var hookRunRE = regexp.MustCompile(`^(\S+) \[\w+\] Hooks: ([A-Za-z]+)(?::(\S+))? \[(.*)\] (?:finished with status (-?\d+)|(cancelled)) \((\d+)ms\)$`)

// HookRuns returns every command hook run in a debug log, in order.
func HookRuns(debug string) []HookRun {
	var runs []HookRun
	for _, line := range strings.Split(debug, "\n") {
		m := hookRunRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		end, _ := time.Parse(time.RFC3339Nano, m[1])
		status, _ := strconv.Atoi(m[5])
		ms, _ := strconv.Atoi(m[7])
		runs = append(runs, HookRun{Event: m[2], Matcher: m[3], Command: m[4], Status: status, Cancelled: m[6] != "",
			Duration: time.Duration(ms) * time.Millisecond, End: end})
	}
	return runs
}

// Unrecognized returns the debug-log lines saying a hook printed JSON keys the client
// ignored ("Hook JSON output had unrecognized keys (ignored): …").
func Unrecognized(debug string) []string {
	return grep(debug, func(line string) bool {
		return strings.Contains(line, "unrecognized keys")
	})
}

// HookErrors returns the debug-log lines reporting a failed hook, such as
//
//	... [ERROR] "Hook PostToolUse:Read (PostToolUse) error: status code 1\nstderr:\noops"
//
// A Stop hook's deliberate {"decision":"block"} is not an error.
func HookErrors(debug string) []string {
	return grep(debug, func(line string) bool {
		return strings.Contains(line, "[ERROR]") && strings.Contains(line, "Hook")
	})
}

// A HookOutput is the JSON a hook printed, as the client's debug log reports it:
//
//	... [DEBUG] "Hook Stop (Stop) success:\n{\"decision\":\"block\",\"reason\":\"XYZ\"}"
type HookOutput struct {
	Event  string         // "Stop", "SubagentStop", "PostToolUse", ...
	Output map[string]any // the decoded JSON
}

// A hook that also wrote to stderr is logged as "success:\nstdout:\n{…}\nstderr:\n…".
var hookOutputRE = regexp.MustCompile(`(?s)^Hook \S+ \((\w+)\) success:\n(?:stdout:\n)?(\{.*?\})(?:\nstderr:\n.*)?$`)

// HookOutputs returns, in order, the JSON outputs of the hooks that printed one.
func HookOutputs(debug string) []HookOutput {
	var outs []HookOutput
	for _, line := range strings.Split(debug, "\n") {
		_, quoted, ok := strings.Cut(line, `[DEBUG] "Hook `)
		if !ok {
			continue
		}
		var text string
		if json.Unmarshal([]byte(`"Hook `+quoted), &text) != nil {
			continue
		}
		m := hookOutputRE.FindStringSubmatch(text)
		if m == nil {
			continue
		}
		var out map[string]any
		if json.Unmarshal([]byte(m[2]), &out) == nil {
			outs = append(outs, HookOutput{Event: m[1], Output: out})
		}
	}
	return outs
}

func grep(text string, keep func(string) bool) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if keep(line) {
			out = append(out, line)
		}
	}
	return out
}

// HookRuns returns the run's command hook runs.
func (r *Result) HookRuns() []HookRun { return HookRuns(r.Debug) }

// HookOutputs returns the JSON the run's hooks printed.
func (r *Result) HookOutputs() []HookOutput { return HookOutputs(r.Debug) }

// Halt returns the stopReason of a Stop hook's halt (continue:false) in
// the run, the last one, or "".
func (r *Result) Halt() string {
	var reason string
	for _, o := range r.HookOutputs() {
		if o.Event == "Stop" && o.Output["continue"] == false {
			reason, _ = o.Output["stopReason"].(string)
		}
	}
	return reason
}

// Overlapping returns, for each run, how many runs (itself included) were under way at
// some moment of it: the client runs the hooks of parallel tool calls at once.
func Overlapping(runs []HookRun) []int {
	n := make([]int, len(runs))
	for i, a := range runs {
		for _, b := range runs {
			if !b.Start().After(a.End) && !a.Start().After(b.End) {
				n[i]++
			}
		}
	}
	return n
}

// CheckHooks logs every hook run with its duration as the client measured it, and
// fails the test if a hook exited non-zero, printed keys the client ignored, or
// failed, or if a captured input fails CheckInputs.
//
// Durations are logged, never judged: on a shared 2-core machine a hook's wall time
// says more about the machine than about the hook. They are measured in `make bench`
// and reported in docs/conformance.md.
func (r *Result) CheckHooks() {
	r.t.Helper()
	runs := r.HookRuns()
	overlap := Overlapping(runs)
	r.t.Logf("load average %.1f on %d CPUs", r.Load, runtime.NumCPU())
	for i, h := range runs {
		r.t.Logf("hook %v (%d at once)", h, overlap[i])
		if h.Status != 0 {
			r.t.Errorf("hook %v: exit status %d", h, h.Status)
		}
	}
	for _, line := range Unrecognized(r.Debug) {
		r.t.Errorf("hook output ignored: %s", line)
	}
	for _, line := range HookErrors(r.Debug) {
		r.t.Errorf("hook error: %s", line)
	}
	r.CheckInputs()
}
