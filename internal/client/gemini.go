package client

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
)

// Gemini is Gemini CLI. Its events have their own names, its tools their
// own names and fields; its answers are Claude Code's, except that a tool
// call is refused with decision "deny" and a reason.
var Gemini = &Client{
	Name: geminiAnswers{}.Name(), Title: "Gemini CLI",
	HookFile: ".gemini/settings.json", // hooks and hooksConfig in the one file
	Hooks: []Hook{
		{"AfterTool", "read_file|read_many_files|run_shell_command", hook.Detect, 10},
		{"BeforeAgent", "", hook.Detect, 10},
		{"BeforeTool", "write_file|replace|run_shell_command", hook.Detect, 10},
		{"AfterAgent", "", hook.Gate, 600},
		{"BeforeAgent", "", hook.Testhook, 10},
		{"AfterAgent", "", hook.Testhook, 600},
	},
	Timeout:    60 * time.Second,
	ProjectVar: "GEMINI_PROJECT_DIR",
	Unit:       1000,
	WallLeft:   "no wall gate init can turn on: Gemini CLI's sandbox runs the whole session in docker or podman (or Seatbelt on macOS) and is chosen by the user (--sandbox, GEMINI_SANDBOX); the guard alone refuses a write to the protected set",
	Trust:      "Gemini CLI runs project hooks only in a trusted folder: trust it when Gemini asks (headless runs: set GEMINI_CLI_TRUST_WORKSPACE=true; --skip-trust runs the folder untrusted, with project hooks off)",
	Limits: []string{
		"Gemini CLI subagents fire no hooks: a subagent's reads do not arm and its end is not gated; the main agent's AfterAgent is",
		"Gemini CLI has no block cap, but after 30 turns its loop detector may end a session; max_blocks ends a failing loop first",
		"read_many_files arms the files it names and simple globs; a directory or a ** glob is not expanded",
		"Gemini CLI expands a custom command (.gemini/commands) before BeforeAgent: the hook sees its text, not its name, so a custom command does not arm a mapping; a read of the prompt file does",
	},
	events:  geminiEvent,
	answers: geminiAnswers{},
	decode:  decodeGemini,
	where:   mainThread,
	lines:   lines[geminiLine](nil, `"toolCalls"`, `"type":"user"`),
}

// geminiEvent maps Gemini CLI's events to stopgate's.
var geminiEvent = map[string]string{
	"AfterTool":   hook.PostToolUse,
	"BeforeTool":  hook.PreToolUse,
	"AfterAgent":  hook.Stop,
	"BeforeAgent": hook.UserPromptSubmit,
}

// geminiEvents are the hook events only Gemini CLI sends.
var geminiEvents = []string{"BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "BeforeModel", "AfterModel", "BeforeToolSelection", "PreCompress"}

type geminiAnswers struct{ showsHalt }

func (geminiAnswers) Name() string { return "gemini" }

// geminiTool maps Gemini CLI's file tools to the Claude Code tool stopgate
// judges; each takes file_path like it. read_many_files and
// run_shell_command are translated on their own.
var geminiTool = map[string]string{"read_file": "Read", "write_file": "Write", "replace": "Edit"}

// geminiOutput is what Gemini CLI reads: Claude Code's fields, and a
// hookSpecificOutput that carries additionalContext.
type geminiOutput struct {
	hook.Output                        // its own hookSpecificOutput is shadowed
	HookSpecificOutput *geminiSpecific `json:"hookSpecificOutput,omitempty"`
}

type geminiSpecific struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}

func (geminiAnswers) Encode(event string, o hook.Output) any {
	out := geminiOutput{Output: o}
	if s := o.HookSpecificOutput; s != nil {
		if s.PermissionDecision == "deny" {
			out.Decision, out.Reason = "deny", s.PermissionDecisionReason
		}
		if s.AdditionalContext != "" {
			out.HookSpecificOutput = &geminiSpecific{HookEventName: event, AdditionalContext: s.AdditionalContext}
		}
	}
	return out
}

func decodeGemini(data []byte, _ string) (*hook.Input, error) {
	m, err := object(data, "tool_response", "llm_request", "llm_response")
	if err != nil {
		return nil, err
	}
	event := str(m, "hook_event_name")
	if e, ok := geminiEvent[event]; ok {
		m["hook_event_name"] = e
	}
	rename(m, "prompt_response", "last_assistant_message")
	tool := str(m, "tool_name")
	args, _ := m["tool_input"].(map[string]any)
	var reads []string
	var cwd string
	switch {
	case geminiTool[tool] != "":
		m["tool_name"] = geminiTool[tool]
	case tool == "read_many_files":
		m["tool_name"], m["tool_input"] = "Read", map[string]any{}
		reads = manyFiles(args, str(m, "cwd"))
	case tool == "run_shell_command":
		m["tool_name"] = "Bash"
		if d, _ := args["dir_path"].(string); d != "" {
			cwd = d // the command runs there, not in the session's cwd
		}
	}
	in, err := claudeShaped(m)
	if err != nil {
		return nil, err
	}
	in.Client, in.ClientEvent, in.Reads = geminiAnswers{}, event, reads
	if cwd != "" {
		if !filepath.IsAbs(cwd) {
			cwd = filepath.Join(in.Cwd, cwd)
		}
		in.Calls = []hook.Call{{Tool: in.ToolName, Input: in.Tool, Cwd: cwd}}
	}
	return in, nil
}

// manyFiles returns the files read_many_files reads: its include operands,
// literal paths and globs without "**", from the working directory. A
// directory or a recursive glob is not expanded (a documented limit).
func manyFiles(args map[string]any, cwd string) []string {
	out := []string{}
	list, _ := args["include"].([]any)
	for _, v := range list {
		p, _ := v.(string)
		if p == "" || strings.Contains(p, "**") {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if !strings.ContainsAny(p, "*?[") {
			out = append(out, filepath.Clean(p))
			continue
		}
		matches, _ := filepath.Glob(p)
		out = append(out, matches...)
	}
	return out
}

// Gemini CLI records a session in a JSONL session file
// (~/.gemini/tmp/<project>/chats/session-….jsonl); a message is written
// again when its tool calls complete, and "$set" lines update metadata:
//
//	{"type":"gemini","toolCalls":[{"name":"read_file","args":{"file_path":…}}],…}
//	{"type":"user","content":[{"text":"what a person typed, or a fed-back block reason"}]}
//
// A fed-back block is a user message like a typed one: it is told by the
// gate's own prefix. Subagents fire no hooks: the file is the main thread's.
type geminiLine struct {
	stamp
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"toolCalls"`
}

func (*geminiLine) agent() string { return "" }

func (l *geminiLine) reads(cwd string, sh Shell) []string {
	var out []string
	for _, c := range l.ToolCalls {
		out = append(out, toolReads(c.Name, args(c.Args), cwd, sh)...)
	}
	return out
}

// toolReads are the files one call of Gemini CLI's file tools reads, as
// its record (or a fork's, Qwen Code's) names the call and its arguments.
func toolReads(name string, a map[string]any, cwd string, sh Shell) []string {
	switch name {
	case "read_file":
		p, _ := a["file_path"].(string)
		if p == "" {
			p, _ = a["absolute_path"].(string)
		}
		if p = abs(p, cwd); p != "" {
			return []string{p}
		}
	case "read_many_files":
		return manyFiles(a, cwd)
	case "run_shell_command":
		dir := cwd
		d, _ := a["dir_path"].(string)
		if d == "" {
			d, _ = a["directory"].(string) // Qwen Code's name for it
		}
		if d != "" {
			dir = abs(d, cwd)
		}
		cmd, _ := a["command"].(string)
		return sh(cmd, dir)
	}
	return nil
}

func (l *geminiLine) command() string {
	for _, c := range l.ToolCalls {
		if c.Name == "activate_skill" {
			name, _ := args(c.Args)["name"].(string)
			return name
		}
	}
	return ""
}

func (l *geminiLine) text() (string, bool) {
	if l.Type != "user" {
		return "", false
	}
	var s string
	if json.Unmarshal(l.Content, &s) == nil {
		return s, true
	}
	var parts []struct {
		Text     *string         `json:"text"`
		Response json.RawMessage `json:"functionResponse"`
	}
	if json.Unmarshal(l.Content, &parts) != nil {
		return "", false
	}
	var texts []string
	for _, p := range parts {
		if p.Response != nil {
			return "", false // a tool's result
		}
		if p.Text != nil {
			texts = append(texts, *p.Text)
		}
	}
	return strings.Join(texts, "\n"), len(texts) > 0
}

func (l *geminiLine) typed() (string, bool)         { return typedText(l.text()) }
func (l *geminiLine) block() (string, string, bool) { return fedBackBlock(l.text()) }
