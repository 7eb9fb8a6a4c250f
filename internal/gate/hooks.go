package gate

import (
	"slices"
	"strconv"
	"strings"

	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
)

// registrations is every hook `gate init` registers in Claude Code's
// settings and `gate check` expects. An entry counts only when its program
// handles the event (hook.Handles).
var registrations = client.Claude.Hooks

// wanted returns the hooks to register, each a launcher (launch) of its
// program under bin, a shell path prefix such as `"$CLAUDE_PROJECT_DIR"/bin`,
// installed as in says; root is where paths are shown from. Without
// testhook, its hooks are left out (gate init --no-testhook).
func wanted(bin string, in install, root string, testhook bool) []settings.Hook {
	var out []settings.Hook
	for _, r := range registrations {
		if !slices.Contains(hook.Handles[r.Program], r.Event) || r.Program == hook.Testhook && !testhook {
			continue
		}
		cmd := launch(client.Claude, r.Event, bin+"/"+r.Program, strings.TrimSpace(timeoutFlag(r)), in, root, in.shown(root, r.Program))
		out = append(out, settings.Hook{Event: r.Event, Matcher: r.Matcher, Command: cmd, Timeout: r.Timeout, StatusMessage: status(r), OnFailure: onFailure(r)})
	}
	return out
}

// status is what Claude Code shows while the hook runs (statusMessage):
// the gate's stops, whose validators may take a while, say so. Of the
// other clients' files, none is known to read such a field.
func status(r client.Hook) string {
	if r.Program == hook.Gate && (r.Event == hook.Stop || r.Event == hook.SubagentStop) {
		return "stopgate: checking the prompt's acceptance criteria…"
	}
	return ""
}

// onFailure is "block" for the guard's hooks: a guard that cannot start,
// times out or answers wrongly then refuses the call instead of letting
// it through. Claude Code ignores it on a stop, so the gate's go without.
func onFailure(r client.Hook) string {
	if r.Program == hook.Detect && guards(r.Event) {
		return "block"
	}
	return ""
}

// guards reports whether event is one the tamper guard answers.
func guards(event string) bool {
	return event == hook.PreToolUse || event == hook.PreSkillShellCommand
}

// timeoutFlag tells the gate the hook timeout it is registered with, in
// seconds, so that it answers before the client kills it (package stop,
// deadline.go); the other programs need not know.
func timeoutFlag(r client.Hook) string {
	if r.Program != hook.Gate {
		return ""
	}
	return " --timeout " + strconv.Itoa(r.Timeout)
}

// expected is every hook gate init registers, to look up by event and
// program (settings.Lookup): their commands do not count.
func expected() []settings.Hook { return wanted(projectBin, install{}, "", true) }

// Where the hook commands live, as written into the settings.
const (
	projectBin = `"$CLAUDE_PROJECT_DIR"/bin`
	pluginBin  = `"${CLAUDE_PLUGIN_ROOT}"/bin`
)
