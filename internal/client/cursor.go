package client

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
)

// Cursor is Cursor's agent, tested on its documented shapes; it runs Claude Code's registration too (Runs).
var Cursor = &Client{
	Name: "cursor", Title: "Cursor",
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
	BlockCap:   cursorLoopLimit,
	WallLeft:   "no wall gate init can turn on: Cursor's sandbox and command allowlist are the user's own settings; the guard alone refuses a write to the protected set",
	Trust:      "Cursor runs a project's .cursor/hooks.json once the workspace is trusted; Claude Code's registration runs only with \"third-party hooks\" on",
	Limits: []string{
		fmt.Sprintf("Cursor continues a stopped agent at most loop_limit times (gate init writes %d): keep max_blocks below it", cursorLoopLimit),
		"Cursor has no halt on stop: a halt is a followup_message telling the agent to stop and tell the user why",
		"Cursor also runs Claude Code's registration (third-party hooks): those hooks answer Cursor's inputs in its words, and step aside when .cursor/hooks.json runs stopgate, so one stop is judged once",
		"tested by contract on Cursor's documented shapes, not on the real binary",
	},
	events: cursorEvent,
	encode: cursorEncode,
	halt:   relayHalt, // a followup_message, until loop_limit; a deny's user_message the user sees
	input: &shape{drop: []string{"content", "output", "tool_output", "attachments"}, file: "path", fix: cursorFix,
		tools: map[string]string{"Read": "Read", "Write": "Write", "Edit": "Edit", "StrReplace": "Edit", "MultiEdit": "Edit", "Delete": "Write", "Shell": "Bash"}},
	threads: mainOnly,
	format:  &versionedFormat{title: "Cursor", events: cursorEvents, entry: cursorEntry},
	Runs:    []*Client{Claude},
	aside:   cursorOwnHooks,
}

const cursorHookFile = ".cursor/hooks.json"

// cursorLoopLimit is the loop_limit init writes on stop hooks: above any max_blocks gate check accepts.
const cursorLoopLimit = 10

func cursorEntry(h settings.Hook) hookEntry {
	c := hookEntry{Type: "command", Command: h.Command, Timeout: h.Timeout}
	if cursorEvent[h.Event] == hook.Stop || cursorEvent[h.Event] == hook.SubagentStop {
		c.LoopLimit = cursorLoopLimit
	}
	return c
}

// cursorEvents are the agent events in the order Cursor documents them.
var cursorEvents = []string{"beforeSubmitPrompt", "preToolUse", "postToolUse", "beforeShellExecution", "afterShellExecution",
	"beforeMCPExecution", "beforeReadFile", "afterFileEdit", "stop", "subagentStop"}

// cursorEvent maps Cursor's events to stopgate's: beforeReadFile is a read, armed before the model sees it.
var cursorEvent = map[string]string{"beforeReadFile": hook.PostToolUse, "afterShellExecution": hook.PostToolUse,
	"postToolUse": hook.PostToolUse, "beforeSubmitPrompt": hook.UserPromptSubmit, "beforeShellExecution": hook.PreToolUse,
	"preToolUse": hook.PreToolUse, "stop": hook.Stop, "subagentStop": hook.SubagentStop}

// cursorOutput is what Cursor reads on a stop, a permission event, a prompt.
type cursorOutput struct {
	Followup     string `json:"followup_message,omitempty"`
	Permission   string `json:"permission,omitempty"`
	Continue     *bool  `json:"continue,omitempty"`
	UserMessage  string `json:"user_message,omitempty"`
	AgentMessage string `json:"agent_message,omitempty"`
}

// cursorEncode answers only a refusal: an "allow" would skip Cursor's own approval.
func cursorEncode(event string, o hook.Output) any {
	reason, deny := o.Reason, o.Decision == "block"
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
		return cursorOutput{Continue: new(false), UserMessage: reason}
	case hook.PreToolUse:
		return cursorOutput{Permission: "deny", UserMessage: reason, AgentMessage: reason}
	}
	return nil
}

// cursorFix: conversation_id is the session, the first workspace root the project (a command runs in cwd).
func cursorFix(m payload, _ string) (more, error) {
	m.rename("conversation_id", "session_id")
	root := m.str("cwd")
	if roots := listed(m["workspace_roots"], ""); len(roots) > 0 {
		root = roots[0]
	}
	x := more{cwd: cmp.Or(m.str("cwd"), root)}
	m["cwd"] = root
	if m.str("subagent_id") != "" {
		m.rename("subagent_id", "agent_id")
	}
	m["stop_hook_active"] = m["loop_count"] != nil && fmt.Sprint(m["loop_count"]) != "0"
	switch m.str("hook_event_name") {
	case "beforeReadFile":
		m["tool_name"], m["tool_input"] = "Read", map[string]any{"file_path": m.str("file_path")}
	case "beforeShellExecution", "afterShellExecution":
		m["tool_name"], m["tool_input"] = "Bash", map[string]any{"command": m.str("command")}
	}
	delete(m, "file_path") // Claude Code's file_path is ConfigChange's
	return x, nil
}

// cursorOwnHooks steps Claude Code's registration aside when .cursor/hooks.json runs stopgate too.
func cursorOwnHooks(in *hook.Input) error {
	data, _ := os.ReadFile(filepath.Join(in.Cwd, filepath.FromSlash(cursorHookFile))) // none: the Claude registration judges
	for _, c := range commandsIn(data) {
		if slices.Contains(hook.Programs, settings.Program(c)) {
			return fmt.Errorf("cursor runs stopgate from %s, which judges this %s: %w", cursorHookFile, in.ClientEvent, ErrIgnored)
		}
	}
	return nil
}
