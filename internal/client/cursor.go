package client

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
)

// Cursor is Cursor's agent (the IDE and cursor-agent), from its
// documentation (cursor.com/docs/agent/hooks): no binary this machine can
// drive, so it is tested by contract on the documented shapes.
//
// Its hook file is .cursor/hooks.json, {"version": 1, "hooks": {event:
// [{"command": …}]}}. Every input names its event (camelCase) and carries
// conversation_id, generation_id, cursor_version and workspace_roots; a
// stop continues the agent only through {"followup_message": …}, at most
// loop_limit times; a permission event refuses with {"permission":
// "deny", "user_message": …, "agent_message": …}.
//
// Cursor also runs Claude Code's registration (.claude/settings*.json,
// "third-party hooks") with its own inputs: those are recognised by
// cursor_version and answered in Cursor's words, unless .cursor/hooks.json
// runs stopgate too, whose hooks then judge alone (aside).
var Cursor = &Client{
	Name: cursorAnswers{}.Name(), Title: "Cursor",
	HookFile: cursorHookFile,
	Hooks: []Hook{
		{"beforeReadFile", "", hook.Detect, 10},       // a prompt read
		{"afterShellExecution", "", hook.Detect, 10},  // a prompt read through the shell
		{"beforeSubmitPrompt", "", hook.Detect, 10},   // a command typed
		{"beforeShellExecution", "", hook.Detect, 10}, // the tamper guard
		{"preToolUse", "", hook.Detect, 10},           // the guard on the edit tools
		{"stop", "", hook.Gate, 600},
		{"subagentStop", "", hook.Gate, 600},
	},
	Timeout:    60 * time.Second,
	ProjectVar: "CURSOR_PROJECT_DIR",
	Unit:       1,
	BlockCap:   cursorLoopLimit,
	WallLeft:   "no wall gate init can turn on: Cursor's sandbox and command allowlist are the user's own settings; the guard alone refuses a write to the protected set",
	Trust:      "Cursor runs a project's .cursor/hooks.json once the workspace is trusted; Claude Code's registration runs only with \"third-party hooks\" on",
	Limits: []string{
		fmt.Sprintf("Cursor continues a stopped agent at most loop_limit times (gate init writes %d): keep max_blocks below it", cursorLoopLimit),
		"Cursor has no halt on stop: a halt is a followup_message telling the agent to stop and tell the user why",
		"Cursor also runs Claude Code's registration (third-party hooks): those hooks answer Cursor's inputs in its words, and step aside when .cursor/hooks.json runs stopgate, so one stop is judged once",
		"tested by contract on Cursor's documented shapes, not on the real binary",
	},
	events:  cursorEvent,
	answers: cursorAnswers{},
	decode:  decodeCursor,
	where:   mainThread,
	format:  cursorFormat,
	marks:   []string{"cursor_version"},
	Runs:    []*Client{Claude},
	aside:   cursorOwnHooks,
}

const cursorHookFile = ".cursor/hooks.json"

// cursorLoopLimit is the loop_limit gate init writes on stop hooks: above
// any max_blocks gate check accepts, so stopgate ends a loop, not Cursor.
const cursorLoopLimit = 10

// cursorFormat is .cursor/hooks.json: Copilot's layout with Cursor's keys.
var cursorFormat = versionedFormat{title: "Cursor", events: cursorEvents, entry: func(h settings.Hook) copilotCommand {
	c := copilotCommand{Type: "command", Command: h.Command, Timeout: h.Timeout}
	if cursorEvent[h.Event] == hook.Stop || cursorEvent[h.Event] == hook.SubagentStop {
		c.LoopLimit = cursorLoopLimit
	}
	return c
}}

// cursorEvents are the agent events in the order Cursor documents them.
var cursorEvents = []string{"beforeSubmitPrompt", "preToolUse", "postToolUse", "beforeShellExecution", "afterShellExecution",
	"beforeMCPExecution", "beforeReadFile", "afterFileEdit", "stop", "subagentStop"}

// cursorEvent maps Cursor's events to stopgate's.
var cursorEvent = map[string]string{
	"beforeReadFile":       hook.PostToolUse, // a read, armed before the model sees it
	"afterShellExecution":  hook.PostToolUse,
	"postToolUse":          hook.PostToolUse,
	"beforeSubmitPrompt":   hook.UserPromptSubmit,
	"beforeShellExecution": hook.PreToolUse,
	"preToolUse":           hook.PreToolUse,
	"stop":                 hook.Stop,
	"subagentStop":         hook.SubagentStop,
}

// cursorTool maps Cursor's agent tools to the Claude Code tool stopgate
// judges.
var cursorTool = map[string]string{"Read": "Read", "Write": "Write", "Edit": "Edit", "StrReplace": "Edit",
	"MultiEdit": "Edit", "Delete": "Write", "Shell": "Bash"}

// cursorAnswers writes Cursor's answers. Its stop has no answer that ends
// the session and shows the user why, and passing the stop would end it
// unseen: a halt is relayed as a followup_message, until loop_limit; on a
// permission event the same block is a deny whose user_message the user
// sees.
type cursorAnswers struct{ relaysHalt }

func (cursorAnswers) Name() string { return "cursor" }

// cursorOutput is what Cursor reads: followup_message on stop and
// subagentStop; permission with its messages on the permission events;
// continue with user_message on beforeSubmitPrompt.
type cursorOutput struct {
	Followup     string `json:"followup_message,omitempty"`
	Permission   string `json:"permission,omitempty"`
	Continue     *bool  `json:"continue,omitempty"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
}

// Encode answers only a refusal: an "allow" would also skip Cursor's own
// approval of the call, and after-events take no answer.
func (cursorAnswers) Encode(event string, o hook.Output) any {
	reason := o.Reason
	deny := o.Decision == "block"
	if s := o.HookSpecificOutput; s != nil && s.PermissionDecision == "deny" {
		reason, deny = s.PermissionDecisionReason, true
	}
	if !deny {
		return nil
	}
	switch cursorEvent[event] {
	case hook.Stop, hook.SubagentStop:
		return cursorOutput{Followup: reason}
	case hook.UserPromptSubmit:
		f := false
		return cursorOutput{Continue: &f, UserMessage: reason}
	case hook.PreToolUse:
		return cursorOutput{Permission: "deny", UserMessage: reason, AgentMessage: reason}
	}
	return nil
}

func decodeCursor(data []byte, _ string) (*hook.Input, error) {
	m, err := object(data, "content", "output", "tool_output", "attachments")
	if err != nil {
		return nil, err
	}
	event := str(m, "hook_event_name")
	m["hook_event_name"] = cmp.Or(cursorEvent[event], event)
	rename(m, "conversation_id", "session_id")
	dir := cursorRoot(m)
	m["cwd"], dir = dir, cmp.Or(str(m, "cwd"), dir) // the project; where a command runs
	if str(m, "subagent_id") != "" {
		rename(m, "subagent_id", "agent_id")
	}
	m["stop_hook_active"] = m["loop_count"] != nil && fmt.Sprint(m["loop_count"]) != "0"
	switch event {
	case "beforeReadFile":
		m["tool_name"], m["tool_input"] = "Read", map[string]any{"file_path": str(m, "file_path")}
	case "beforeShellExecution", "afterShellExecution":
		m["tool_name"], m["tool_input"] = "Bash", map[string]any{"command": str(m, "command")}
	default:
		args, _ := m["tool_input"].(map[string]any)
		if p, ok := args["path"]; ok && args["file_path"] == nil {
			args["file_path"] = p
		}
		if t, ok := cursorTool[str(m, "tool_name")]; ok {
			m["tool_name"] = t
		}
	}
	delete(m, "file_path") // Claude Code's file_path is ConfigChange's
	in, err := claudeShaped(m)
	if err != nil {
		return nil, err
	}
	in.Client, in.ClientEvent = cursorAnswers{}, event
	if in.ToolName == "Bash" && dir != in.Cwd {
		in.Calls = []hook.Call{{Tool: in.ToolName, Input: in.Tool, Cwd: dir}} // the command runs there
	}
	return in, nil
}

// cursorRoot is the project Cursor runs in: its first workspace root.
func cursorRoot(m map[string]any) string {
	roots, _ := m["workspace_roots"].([]any)
	if len(roots) > 0 {
		if r, ok := roots[0].(string); ok {
			return r
		}
	}
	return str(m, "cwd")
}

// cursorOwnHooks steps the Claude Code registration aside when Cursor runs
// it and the project's .cursor/hooks.json runs stopgate too: Cursor runs
// every matching hook, and one stop must be judged once. Its own file
// answers in Cursor's words and has loop_limit, so it is the one that judges.
func cursorOwnHooks(in *hook.Input) error {
	data, err := os.ReadFile(filepath.Join(in.Cwd, filepath.FromSlash(cursorHookFile)))
	var v any
	if err != nil || json.Unmarshal(data, &v) != nil {
		return nil // no file of its own Cursor runs: the Claude registration judges
	}
	for _, c := range commandsIn(v) {
		if slices.Contains(hook.Programs, settings.Program(c)) {
			return fmt.Errorf("cursor runs stopgate from %s, which judges this %s: %w", cursorHookFile, in.ClientEvent, ErrIgnored)
		}
	}
	return nil
}
