package gate

import (
	"slices"

	stopgate "github.com/stopgate/stopgate"
	"github.com/stopgate/stopgate/internal/detector"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
)

// registration is one hook stopgate registers: a program for an event.
type registration struct {
	event   string
	matcher string // tool-name pattern for tool events, "" for the others
	program string // a command under cmd/
	timeout int    // seconds
}

// registrations is every hook `gate init` registers and `gate check`
// expects, one line each. An entry counts only when its program was built
// with this gate (it is in cmd/) and handles the event, so adding the line
// before the program exists registers nothing.
//
// Timeouts are backstops for a wedged process, not budgets: detect answers
// in milliseconds; the gate enforces each validator's own timeout and runs
// them in parallel, so its hook timeout only needs to exceed the longest
// (`gate check` warns when it does not).
var registrations = []registration{
	{hook.PostToolUse, "Read|Skill", "detect", 10}, // a prompt read, or a command the model ran
	{hook.UserPromptExpansion, "", "detect", 10},
	{hook.UserPromptSubmit, "", "detect", 10},
	{hook.PreToolUse, "Write|Edit|MultiEdit|NotebookEdit|Bash", "detect", 10}, // the tamper guard
	{hook.Stop, "", "gate", 600},
	{hook.SubagentStop, "", "gate", 600},
	{hook.UserPromptSubmit, "", "testhook", 10}, // the test runner's words
	{hook.Stop, "", "testhook", 600},            // the test runner's --auto mode
}

// handles lists the events of the programs this package can ask; a program
// not listed is taken to handle the events its lines name.
var handles = map[string][]string{
	"detect": detector.Events,
	"gate":   Events,
}

// wanted returns the hooks to register, with commands under bin, a shell
// path prefix such as `"$CLAUDE_PROJECT_DIR"/bin`.
func wanted(bin string) []settings.Hook {
	var out []settings.Hook
	for _, r := range registrations {
		if !stopgate.HasCommand(r.program) {
			continue
		}
		if evs, ok := handles[r.program]; ok && !slices.Contains(evs, r.event) {
			continue
		}
		out = append(out, settings.Hook{Event: r.event, Matcher: r.matcher, Command: bin + "/" + r.program, Timeout: r.timeout})
	}
	return out
}

// programs returns the distinct programs of hooks, in order.
func programs(hooks []settings.Hook) []string {
	var out []string
	for _, h := range hooks {
		if p := settings.Program(h.Command); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// Where the hook commands live, as written into the settings.
const (
	projectBin = `"$CLAUDE_PROJECT_DIR"/bin`
	pluginBin  = `"${CLAUDE_PLUGIN_ROOT}"/bin`
)
