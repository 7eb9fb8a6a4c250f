package client

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
)

// Gemini is Gemini CLI: its own events and tools; Claude Code's answers, but a tool call is refused with "deny".
var Gemini = &Client{
	Name: "gemini", Title: "Gemini CLI",
	HookFile:   ".gemini/settings.json", // hooks and hooksConfig in the one file
	Hooks:      ownHooks(claudeHooks("read_file|read_many_files|run_shell_command", "write_file|replace|run_shell_command"), geminiEvent),
	Timeout:    60 * time.Second,
	ProjectVar: "GEMINI_PROJECT_DIR",
	unit:       1000,
	WallLeft:   "no wall gate init can turn on: Gemini CLI's sandbox runs the whole session in docker or podman (or Seatbelt on macOS) and is chosen by the user (--sandbox, GEMINI_SANDBOX); the guard alone refuses a write to the protected set",
	Trust:      "Gemini CLI runs project hooks only in a trusted folder: trust it when Gemini asks (headless runs: set GEMINI_CLI_TRUST_WORKSPACE=true; --skip-trust runs the folder untrusted, with project hooks off)",
	Limits: []string{
		"Gemini CLI subagents fire no hooks: a subagent's reads do not arm and its end is not gated; the main agent's AfterAgent is",
		"Gemini CLI has no block cap, but after 30 turns its loop detector may end a session; max_blocks ends a failing loop first",
		"read_many_files arms the files it names and simple globs; a directory or a ** glob is not expanded",
		"Gemini CLI expands a custom command (.gemini/commands) before BeforeAgent: the hook sees its text, not its name, so a custom command does not arm a mapping; a read of the prompt file does",
	},
	events: geminiEvent,
	encode: geminiEncode,
	input: &shape{drop: []string{"tool_response", "llm_request", "llm_response"}, file: "file_path", fix: geminiFix,
		tools: map[string]string{"read_file": "Read", "write_file": "Write", "replace": "Edit", "run_shell_command": "Bash"}},
	threads: mainOnly,
	lines:   lineOf(geminiShow, `"toolCalls"`, `"type":"user"`),
}

var geminiEvent = map[string]string{"AfterTool": hook.PostToolUse, "BeforeTool": hook.PreToolUse, "AfterAgent": hook.Stop, "BeforeAgent": hook.UserPromptSubmit}

// geminiEvents are the hook events only Gemini CLI sends.
var geminiEvents = []string{"BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel", "BeforeToolSelection", "PreCompress"}

// geminiEncode answers as Claude Code, but with additionalContext alone specific and a tool call denied by decision.
func geminiEncode(event string, o hook.Output) any {
	if s := o.HookSpecificOutput; s != nil {
		o.HookSpecificOutput = nil // only additionalContext is specific
		if s.PermissionDecision == "deny" {
			o.Decision, o.Reason = "deny", s.PermissionDecisionReason
		}
		if s.AdditionalContext != "" {
			o.HookSpecificOutput = &hook.Specific{HookEventName: event, AdditionalContext: s.AdditionalContext}
		}
	}
	return o
}

// geminiFix: prompt_response is the reply; read_many_files reads several files; a shell command runs in dir_path.
func geminiFix(m payload, _ string) (more, error) {
	m.rename("prompt_response", "last_assistant_message")
	x := more{reads: readMany(m)}
	if m.str("tool_name") == "run_shell_command" {
		x.cwd, _ = m.args()["dir_path"].(string)
	}
	return x, nil
}

// readMany rewrites read_many_files as a Read of no file, and returns the files it reads.
func readMany(m payload) []string {
	if m.str("tool_name") != "read_many_files" {
		return nil
	}
	reads := manyFiles(m.args(), m.str("cwd"))
	m["tool_name"], m["tool_input"] = "Read", map[string]any{}
	return reads
}

// manyFiles returns the files read_many_files reads: its paths and globs without "**" (a documented limit).
func manyFiles(args map[string]any, cwd string) []string {
	out := []string{}
	for _, p := range listed(args["include"], "") {
		if strings.Contains(p, "**") {
			continue
		}
		if p = abs(p, cwd); !strings.ContainsAny(p, "*?[") {
			out = append(out, p)
			continue
		}
		matches, _ := filepath.Glob(p)
		out = append(out, matches...)
	}
	return out
}

// geminiLine is a line of Gemini CLI's session file, the main thread's.
type geminiLine struct {
	stamp
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"toolCalls"`
}

func geminiShow(l *geminiLine, e *entry, r reader) {
	for _, c := range l.ToolCalls {
		r.call(e, c.Name, args(c.Args))
	}
	if l.Type != "user" {
		return
	}
	var s string
	var parts []part
	if json.Unmarshal(l.Content, &s) == nil {
		e.user(s)
	} else if json.Unmarshal(l.Content, &parts) == nil {
		if t, ok := userText(parts); ok {
			e.user(t)
		}
	}
}
