package gate

import (
	"slices"

	"github.com/stopgate/stopgate/internal/detect"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/stop"
	"github.com/stopgate/stopgate/internal/testhook"
)

// registration is one hook stopgate registers: a program for an event.
type registration struct {
	event   string
	matcher string // tool-name pattern for tool events, "" for the others
	program string // one of hook.Programs
	timeout int    // seconds
}

// registrations is every hook `gate init` registers and `gate check`
// expects, one line each. An entry counts only when its program handles
// the event.
//
// Timeouts are backstops for a wedged process, not budgets: detect answers
// in milliseconds; the gate enforces each validator's own timeout and runs
// them in parallel, so its hook timeout only needs to exceed the longest
// (`gate check` warns when it does not).
var registrations = []registration{
	{hook.PostToolUse, "Read|Skill", hook.Detect, 10}, // a prompt read, or a command the model ran
	{hook.UserPromptExpansion, "", hook.Detect, 10},
	{hook.UserPromptSubmit, "", hook.Detect, 10},
	{hook.PreToolUse, "Write|Edit|MultiEdit|NotebookEdit|Bash", hook.Detect, 10}, // the tamper guard
	{hook.Stop, "", hook.Gate, 600},
	{hook.SubagentStop, "", hook.Gate, 600},
	{hook.UserPromptSubmit, "", hook.Testhook, 10}, // the test runner's words
	{hook.Stop, "", hook.Testhook, 600},            // the test runner's --auto mode
}

// handles lists the events each program declares it handles.
var handles = map[string][]string{
	hook.Detect:   detect.Events,
	hook.Gate:     stop.Events,
	hook.Testhook: testhook.Events,
}

// wanted returns the hooks to register, with commands under bin, a shell
// path prefix such as `"$CLAUDE_PROJECT_DIR"/bin`.
func wanted(bin string) []settings.Hook {
	var out []settings.Hook
	for _, r := range registrations {
		if slices.Contains(handles[r.program], r.event) {
			out = append(out, settings.Hook{Event: r.event, Matcher: r.matcher, Command: bin + "/" + r.program, Timeout: r.timeout})
		}
	}
	return out
}

// Where the hook commands live, as written into the settings.
const (
	projectBin = `"$CLAUDE_PROJECT_DIR"/bin`
	pluginBin  = `"${CLAUDE_PLUGIN_ROOT}"/bin`
)
