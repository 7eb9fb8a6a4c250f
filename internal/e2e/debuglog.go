package e2e

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// A HookRun is one run of a command hook, as the client's debug log reports it:
//
//	... [DEBUG] Hooks: PostToolUse:Read ["$CLAUDE_PROJECT_DIR"/bin/detect] finished with status 0 (13ms)
type HookRun struct {
	Event    string // "PostToolUse", "Stop", "SubagentStop", ...
	Matcher  string // the tool for tool events ("Read"), else ""
	Command  string // the command as registered
	Status   int    // exit status
	Duration time.Duration
}

func (h HookRun) String() string {
	event := h.Event
	if h.Matcher != "" {
		event += ":" + h.Matcher
	}
	return fmt.Sprintf("%s [%s] status %d in %v", event, h.Command, h.Status, h.Duration)
}

var hookRunRE = regexp.MustCompile(`\] Hooks: ([A-Za-z]+)(?::(\S+))? \[(.*)\] finished with status (-?\d+) \((\d+)ms\)$`)

// HookRuns returns every command hook run in a debug log, in order.
func HookRuns(debug string) []HookRun {
	var runs []HookRun
	for _, line := range strings.Split(debug, "\n") {
		m := hookRunRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		status, _ := strconv.Atoi(m[4])
		ms, _ := strconv.Atoi(m[5])
		runs = append(runs, HookRun{Event: m[1], Matcher: m[2], Command: m[3], Status: status, Duration: time.Duration(ms) * time.Millisecond})
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

// CheckHooks logs every hook run with its duration and fails the test if a hook ran
// longer than max, printed keys the client ignored, or failed.
func (r *Result) CheckHooks(max time.Duration) {
	r.t.Helper()
	for _, h := range r.HookRuns() {
		r.t.Logf("hook %v", h)
		if h.Duration > max {
			r.t.Errorf("hook %v: slower than %v", h, max)
		}
	}
	for _, line := range Unrecognized(r.Debug) {
		r.t.Errorf("hook output ignored: %s", line)
	}
	for _, line := range HookErrors(r.Debug) {
		r.t.Errorf("hook error: %s", line)
	}
}
