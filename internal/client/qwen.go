package client

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
)

// Qwen is Qwen Code, a Gemini CLI fork with Claude Code's hook events and
// answers, Gemini CLI's tool names, and Claude Code's Stop contract but
// one: it takes a Stop's continue:false as a block, so a halt is relayed
// (Halt).
var Qwen = &Client{
	Name: qwenAnswers{}.Name(), Title: "Qwen Code",
	HookFile: ".qwen/settings.json", // hooks beside the other settings, as Gemini CLI's
	Hooks: []Hook{
		{hook.PostToolUse, "read_file|read_many_files|run_shell_command", hook.Detect, 10},
		{hook.UserPromptSubmit, "", hook.Detect, 10},
		{hook.PreToolUse, "write_file|edit|run_shell_command", hook.Detect, 10},
		{hook.Stop, "", hook.Gate, 600},
		{hook.SubagentStop, "", hook.Gate, 600},
		{hook.UserPromptSubmit, "", hook.Testhook, 10},
		{hook.Stop, "", hook.Testhook, 600},
	},
	Timeout:    60 * time.Second,
	ProjectVar: "QWEN_PROJECT_DIR",
	Unit:       1,
	BlockCap:   8,
	WallLeft:   "no wall gate init can turn on: Qwen Code's sandbox is chosen by the user (--sandbox, QWEN_SANDBOX); the guard alone refuses a write to the protected set",
	Trust:      "Qwen Code runs project hooks only in a trusted folder when folder trust is on: trust it when Qwen asks",
	Limits: []string{
		"Qwen Code lets the agent stop after 8 consecutive blocks (QWEN_CODE_STOP_HOOK_BLOCK_CAP): keep max_blocks below 8",
		"Qwen Code takes a halt (continue:false) at Stop as a block: stopgate relays the halt's reason through the model",
		"read_many_files arms the files it names and simple globs; a directory or a ** glob is not expanded",
	},
	answers: qwenAnswers{},
	decode:  decodeQwen,
	where:   mainThread,
	lines:   lines[qwenLine](nil, `"functionCall"`, `"type":"user"`),
}

// qwenAnswers writes Qwen Code's answers, Claude Code's. Qwen continues
// the agent on a Stop's continue:false with its stopReason as the next
// prompt, the same as a block, and never shows the user why: a halt is
// relayed, until Qwen's cap.
type qwenAnswers struct {
	claudeAnswers
	relaysHalt
}

func (qwenAnswers) Name() string { return "qwen" }

// qwenTool maps Qwen Code's file tools to the Claude Code tool stopgate
// judges; each takes file_path like it.
var qwenTool = map[string]string{"read_file": "Read", "write_file": "Write", "edit": "Edit", "run_shell_command": "Bash"}

func decodeQwen(data []byte, _ string) (*hook.Input, error) {
	m, err := object(data, "tool_response")
	if err != nil {
		return nil, err
	}
	tool := str(m, "tool_name")
	var reads []string
	switch {
	case qwenTool[tool] != "":
		m["tool_name"] = qwenTool[tool]
	case tool == "read_many_files":
		args, _ := m["tool_input"].(map[string]any)
		m["tool_name"], m["tool_input"] = "Read", map[string]any{}
		reads = manyFiles(args, str(m, "cwd"))
	}
	in, err := claudeShaped(m)
	if err != nil {
		return nil, err
	}
	in.Client, in.ClientEvent, in.Reads = qwenAnswers{}, in.HookEventName, reads
	return in, nil
}

// Qwen Code records a session in a JSONL chat file
// (~/.qwen/projects/<project>/chats/<session>.jsonl), which its hooks name
// as transcript_path:
//
//	{"type":"assistant","message":{"role":"model","parts":[{"functionCall":{"name":"read_file","args":{…}}}]},…}
//	{"type":"user","message":{"role":"user","parts":[{"text":"typed, or a fed-back block reason"}]},…}
//
// A fed-back block is a user message like a typed one: it is told by the
// gate's own prefix.
type qwenLine struct {
	stamp
	Type    string `json:"type"`
	Message struct {
		Parts []struct {
			Text     *string         `json:"text"`
			Response json.RawMessage `json:"functionResponse"`
			Call     *struct {
				Name string          `json:"name"`
				Args json.RawMessage `json:"args"`
			} `json:"functionCall"`
		} `json:"parts"`
	} `json:"message"`
}

func (*qwenLine) agent() string { return "" }

func (l *qwenLine) reads(cwd string, sh Shell) []string {
	var out []string
	for _, p := range l.Message.Parts {
		if p.Call != nil {
			out = append(out, toolReads(p.Call.Name, args(p.Call.Args), cwd, sh)...)
		}
	}
	return out
}

func (l *qwenLine) command() string {
	for _, p := range l.Message.Parts {
		if p.Call != nil && p.Call.Name == "skill" {
			name, _ := args(p.Call.Args)["skill"].(string)
			return name
		}
	}
	return ""
}

func (l *qwenLine) text() (string, bool) {
	if l.Type != "user" {
		return "", false
	}
	var texts []string
	for _, p := range l.Message.Parts {
		if p.Response != nil {
			return "", false // a tool's result
		}
		if p.Text != nil {
			texts = append(texts, *p.Text)
		}
	}
	return strings.Join(texts, "\n"), len(texts) > 0
}

func (l *qwenLine) typed() (string, bool)         { return typedText(l.text()) }
func (l *qwenLine) block() (string, string, bool) { return fedBackBlock(l.text()) }
