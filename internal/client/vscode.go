package client

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/transcript"
)

// VSCode is VS Code's agent mode (GitHub Copilot Chat), from its
// documentation (code.visualstudio.com/docs/copilot/customization/hooks,
// code.visualstudio.com/docs/agents/reference/hooks-reference) and the
// extension's source (microsoft/vscode-copilot-chat): no binary this
// machine can drive, so it is tested by contract on the documented shapes.
//
// It has no hook file of its own: it runs the hooks of .github/hooks/*.json
// (Copilot CLI's file, its camelCase events mapped to VS Code's: agentStop
// is Stop) and of .claude/settings.json, .claude/settings.local.json and
// ~/.claude/settings.json (Runs), every file's hooks for one event in
// turn, each given the same input: Claude Code's snake_case fields, its
// event names, a timestamp, and VS Code's own tool names (read_file,
// create_file, replace_string_in_file, run_in_terminal, …). Its input is
// recognised from either registration (owns) and answered in its words;
// the stop is judged once (hook.Input.StopID), the other registrations
// step aside.
var VSCode = &Client{
	Name: vscodeAnswers{}.Name(), Title: "VS Code agent mode",
	Runs:     []*Client{Claude, Copilot},
	Timeout:  30 * time.Second,
	Unit:     1,
	WallLeft: "no wall gate init can turn on: VS Code's terminal sandbox and auto-approval are the user's own settings; the guard alone refuses a write to the protected set",
	Trust:    "VS Code runs a workspace's hooks once the workspace is trusted, unless chat.hookFilesLocations or the organisation turns them off",
	Limits: []string{
		"VS Code agent mode has no hook file of its own: it runs the hooks gate init writes in .claude/settings.json and gate init --client copilot in .github/hooks/stopgate.json, and they answer its inputs in its words",
		"VS Code runs every registration's hooks for one stop with one input: the first judges it, the others step aside",
		"VS Code sets no project variable for a hook (it removes COPILOT_* from a hook's environment): register the programs by an absolute path (gate init --bin \"$PWD/bin\") or start VS Code with CLAUDE_PROJECT_DIR set",
		"VS Code's record of a session is not read: a prompt read detect did not see is not found at the stop",
		"tested by contract on VS Code's documented shapes, not on the real binary",
	},
	answers: vscodeAnswers{},
	decode:  decodeVSCode,
	where:   func(*hook.Input, string) (string, transcript.Thread) { return "", transcript.Thread{} },
	marks:   []string{"hookEventName", "timestamp"},
	owns:    vscodeOwns,
}

// vscodeEvents are the events VS Code sends that stopgate registers, each
// named as Claude Code names it.
var vscodeEvents = []string{hook.PreToolUse, hook.PostToolUse, hook.UserPromptSubmit, hook.Stop, hook.SubagentStop}

// vscodeOwns recognises VS Code's input: the documented common fields
// (hookEventName), or what the extension sends (chatHookService.ts): a
// timestamp as text beside Claude Code's snake_case fields, and no
// permission_mode, which Claude Code and Qwen Code send; Gemini CLI's
// timestamped inputs name events of its own.
func vscodeOwns(top map[string]json.RawMessage) bool {
	if _, ok := top["hookEventName"]; ok {
		return true
	}
	var stamp, event string
	_, mode := top["permission_mode"]
	return !mode && json.Unmarshal(top["timestamp"], &stamp) == nil && stamp != "" &&
		json.Unmarshal(top["hook_event_name"], &event) == nil && slices.Contains(vscodeEvents, event)
}

type vscodeAnswers struct{ showsHalt }

func (vscodeAnswers) Name() string { return "vscode" }

// vscodeStop is a stop's block as VS Code reads it: the reference puts
// decision and reason in hookSpecificOutput, the extension reads them at
// the top (toolCallingLoop.ts); both are written.
type vscodeStop struct {
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Specific struct {
		HookEventName string `json:"hookEventName"`
		Decision      string `json:"decision"`
		Reason        string `json:"reason"`
	} `json:"hookSpecificOutput"`
}

// Encode: VS Code reads Claude Code's answers (continue and stopReason, a
// PreToolUse's permissionDecision), but for a stop's block, written in
// both places VS Code is documented and built to read it.
func (vscodeAnswers) Encode(event string, o hook.Output) any {
	if o.Decision != "block" || event != hook.Stop && event != hook.SubagentStop {
		return o
	}
	out := vscodeStop{Decision: o.Decision, Reason: o.Reason}
	out.Specific.HookEventName, out.Specific.Decision, out.Specific.Reason = event, o.Decision, o.Reason
	return out
}

func decodeVSCode(data []byte, _ string) (*hook.Input, error) {
	m, err := object(data, "tool_response")
	if err != nil {
		return nil, err
	}
	for camel, snake := range map[string]string{"hookEventName": "hook_event_name", "sessionId": "session_id"} {
		if _, ok := m[snake]; !ok {
			rename(m, camel, snake)
		}
	}
	calls := vscodeTool(m)
	in, err := claudeShaped(m)
	if err != nil {
		return nil, err
	}
	in.Client, in.ClientEvent, in.Calls = vscodeAnswers{}, in.HookEventName, calls
	if in.HookEventName == hook.Stop || in.HookEventName == hook.SubagentStop {
		// One timestamp per event, whichever file's hook it runs
		// (chatHookService.ts builds the input once): it names the stop.
		in.StopID = str(m, "timestamp")
	}
	return in, nil
}

// vscodeTools maps VS Code's tools (toolNames.ts) that take one file,
// filePath, or a command, to the Claude Code tool stopgate judges.
var vscodeTools = map[string]string{"read_file": "Read", "create_file": "Write", "replace_string_in_file": "Edit",
	"insert_edit_into_file": "Edit", "edit_notebook_file": "Edit", "run_in_terminal": "Bash"}

// vscodeTool rewrites VS Code's tool as the Claude Code tool stopgate
// judges, its filePath as file_path; a tool that writes several files
// returns a guard call per file.
func vscodeTool(m map[string]any) []hook.Call {
	args, _ := m["tool_input"].(map[string]any)
	if p, ok := args["filePath"]; ok && args["file_path"] == nil {
		args["file_path"] = p
	}
	var files []string
	switch name := str(m, "tool_name"); name {
	case "apply_patch":
		patch, _ := args["input"].(string)
		files = PatchFiles(patch)
	case "multi_replace_string_in_file":
		list, _ := args["replacements"].([]any)
		for _, r := range list {
			r, _ := r.(map[string]any)
			files = append(files, str(r, "filePath"))
		}
	case "editFiles": // the reference's example: {"files": [...]}
		list, _ := args["files"].([]any)
		for _, f := range list {
			f, _ := f.(string)
			files = append(files, f)
		}
	default:
		if t, ok := vscodeTools[name]; ok {
			m["tool_name"] = t
		}
		return nil
	}
	m["tool_input"] = map[string]any{}
	return writes(slices.DeleteFunc(files, func(f string) bool { return f == "" }))
}
