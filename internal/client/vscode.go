package client

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
)

// VSCode is VS Code's agent mode, tested on its documented shapes and source; it runs Copilot CLI's and Claude Code's
// registrations (Runs) with one input per event, judged once (hook.Input.StopID).
var VSCode = &Client{
	Name: "vscode", Title: "VS Code agent mode",
	Runs:     []*Client{Claude, Copilot},
	Timeout:  30 * time.Second,
	WallLeft: "no wall gate init can turn on: VS Code's terminal sandbox and auto-approval are the user's own settings; the guard alone refuses a write to the protected set",
	Trust:    "VS Code runs a workspace's hooks once the workspace is trusted, unless chat.hookFilesLocations or the organisation turns them off",
	Limits: []string{
		"VS Code agent mode has no hook file of its own: it runs the hooks gate init writes in .claude/settings.json and gate init --client copilot in .github/hooks/stopgate.json, and they answer its inputs in its words",
		"VS Code runs every registration's hooks for one stop with one input: the first judges it, the others step aside",
		"VS Code sets no project variable for a hook (it removes COPILOT_* from a hook's environment): register the programs by an absolute path (gate init --bin \"$PWD/bin\") or start VS Code with CLAUDE_PROJECT_DIR set",
		"VS Code's record of a session is not read: a prompt read detect did not see is not found at the stop",
		"tested by contract on VS Code's documented shapes, not on the real binary",
	},
	encode: vscodeEncode,
	input: &shape{drop: []string{"tool_response"}, file: "filePath", fix: vscodeFix,
		tools: map[string]string{"read_file": "Read", "create_file": "Write", "replace_string_in_file": "Edit",
			"insert_edit_into_file": "Edit", "edit_notebook_file": "Edit", "run_in_terminal": "Bash"}},
	threads: noRecord,
}

// vscodeOwns recognises VS Code's input: hookEventName, or a text timestamp and no permission_mode.
func vscodeOwns(p *probe) bool {
	if _, ok := p.top["hookEventName"]; ok {
		return true
	}
	var stamp, event string // the exact keys: the probe's tags match any case
	_, mode := p.top["permission_mode"]
	return !mode && json.Unmarshal(p.top["timestamp"], &stamp) == nil && stamp != "" && json.Unmarshal(p.top["hook_event_name"], &event) == nil &&
		slices.Contains([]string{hook.PreToolUse, hook.PostToolUse, hook.UserPromptSubmit, hook.Stop, hook.SubagentStop}, event)
}

// vscodeEncode writes a stop's block both where VS Code is documented and built to read it.
func vscodeEncode(event string, o hook.Output) any {
	if o.Decision != "block" || event != hook.Stop && event != hook.SubagentStop {
		return o
	}
	type stop struct {
		HookEventName string `json:"hookEventName"`
		Decision      string `json:"decision"`
		Reason        string `json:"reason"`
	}
	return struct {
		hook.Output      // its own hookSpecificOutput is shadowed
		Specific    stop `json:"hookSpecificOutput"`
	}{o, stop{event, o.Decision, o.Reason}}
}

// vscodeFix takes the documented camelCase fields, a stop's timestamp as its ID, a multi-file write as a call each.
func vscodeFix(m payload, _ string) (more, error) {
	for camel, snake := range map[string]string{"hookEventName": "hook_event_name", "sessionId": "session_id"} {
		if _, ok := m[snake]; !ok {
			m.rename(camel, snake)
		}
	}
	var x more
	if e := m.str("hook_event_name"); e == hook.Stop || e == hook.SubagentStop {
		x.stopID = m.str("timestamp")
	}
	switch a := m.args(); m.str("tool_name") {
	case "apply_patch":
		x.calls = patchWrites(m, "input")
	case "multi_replace_string_in_file":
		x.calls = writes(listed(a["replacements"], "filePath"))
	case "editFiles": // the reference's example: {"files": [...]}
		x.calls = writes(listed(a["files"], ""))
	}
	if x.calls != nil {
		m["tool_input"] = map[string]any{}
	}
	return x, nil
}
