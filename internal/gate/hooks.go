package gate

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/stopgate/stopgate/internal/dialect"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
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
// the event (hook.Handles).
//
// Timeouts are backstops for a wedged process, not budgets: detect answers
// in milliseconds; the gate enforces each validator's own timeout and runs
// them in parallel, so its hook timeout only needs to exceed the longest
// (`gate check` says when it does not); the gate is told it (--timeout).
var registrations = []registration{
	{hook.PostToolUse, "Read|Skill|Bash", hook.Detect, 10}, // a prompt read (Read, a shell command), or a command the model ran
	{hook.UserPromptExpansion, "", hook.Detect, 10},
	{hook.UserPromptSubmit, "", hook.Detect, 10},
	{hook.PreToolUse, "Write|Edit|MultiEdit|NotebookEdit|Bash", hook.Detect, 10}, // the tamper guard
	{hook.Stop, "", hook.Gate, 600},
	{hook.SubagentStop, "", hook.Gate, 600},
	{hook.ConfigChange, "", hook.Gate, 10},         // refuses a settings change that weakens stopgate
	{hook.UserPromptSubmit, "", hook.Testhook, 10}, // the test runner's words
	{hook.Stop, "", hook.Testhook, 600},            // the test runner's --auto mode
}

// wanted returns the hooks to register, each a launcher (launch) of its
// program under bin, a shell path prefix such as `"$CLAUDE_PROJECT_DIR"/bin`,
// installed as in says; root is where paths are shown from. Without
// testhook, its hooks are left out (gate init --no-testhook).
func wanted(bin string, in install, root string, testhook bool) []settings.Hook {
	var out []settings.Hook
	for _, r := range registrations {
		if !slices.Contains(hook.Handles[r.program], r.event) || r.program == hook.Testhook && !testhook {
			continue
		}
		cmd := launch(dialect.Claude, r.event, r.program, bin+"/"+r.program, strings.TrimSpace(r.timeoutFlag()), in, project.Display(root, filepath.Join(in.path, r.program)))
		out = append(out, settings.Hook{Event: r.event, Matcher: r.matcher, Command: cmd, Timeout: r.timeout, StatusMessage: r.status()})
	}
	return out
}

// status is what Claude Code shows while the hook runs (statusMessage):
// the gate's stops, whose validators may take a while, say so. Of the
// other clients' files, none is known to read such a field.
func (r registration) status() string {
	if r.program == hook.Gate && (r.event == hook.Stop || r.event == hook.SubagentStop) {
		return "stopgate: checking the prompt's acceptance criteria…"
	}
	return ""
}

// timeoutFlag tells the gate the hook timeout it is registered with, in
// seconds, so that it answers before the client kills it (package stop,
// deadline.go); the other programs need not know.
func (r registration) timeoutFlag() string {
	if r.program != hook.Gate {
		return ""
	}
	return " --timeout " + strconv.Itoa(r.timeout)
}

// expected is every hook gate init registers, to look up by event and
// program (settings.Lookup): their commands do not count.
func expected() []settings.Hook { return wanted(projectBin, install{}, "", true) }

// Where the hook commands live, as written into the settings.
const (
	projectBin = `"$CLAUDE_PROJECT_DIR"/bin`
	pluginBin  = `"${CLAUDE_PLUGIN_ROOT}"/bin`
)
