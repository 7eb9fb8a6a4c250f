package client

import "time"

// Qwen is Qwen Code: Claude Code's events and answers, Gemini CLI's tools; a halt is relayed (a block to it).
var Qwen = &Client{
	Name: "qwen", Title: "Qwen Code",
	HookFile:   ".qwen/settings.json", // hooks beside the other settings, as Gemini CLI's
	Hooks:      claudeHooks("read_file|read_many_files|run_shell_command", "write_file|edit|run_shell_command"),
	Timeout:    60 * time.Second,
	ProjectVar: "QWEN_PROJECT_DIR",
	BlockCap:   8,
	WallLeft:   "no wall gate init can turn on: Qwen Code's sandbox is chosen by the user (--sandbox, QWEN_SANDBOX); the guard alone refuses a write to the protected set",
	Trust:      "Qwen Code runs project hooks only in a trusted folder when folder trust is on: trust it when Qwen asks",
	Limits: []string{
		"Qwen Code lets the agent stop after 8 consecutive blocks (QWEN_CODE_STOP_HOOK_BLOCK_CAP): keep max_blocks below 8",
		"Qwen Code takes a halt (continue:false) at Stop as a block: stopgate relays the halt's reason through the model",
		"read_many_files arms the files it names and simple globs; a directory or a ** glob is not expanded",
	},
	halt: relayHalt,
	input: &shape{drop: []string{"tool_response"}, file: "file_path",
		tools: map[string]string{"read_file": "Read", "write_file": "Write", "edit": "Edit", "run_shell_command": "Bash"},
		fix:   func(m payload, _ string) (more, error) { return more{reads: readMany(m)}, nil }},
	threads: mainOnly,
	lines:   lineOf(qwenShow, `"functionCall"`, `"type":"user"`),
}

// qwenLine is a line of Qwen Code's chat file (transcript_path).
type qwenLine struct {
	stamp
	Type    string `json:"type"`
	Message struct {
		Parts []part `json:"parts"`
	} `json:"message"`
}

func qwenShow(l *qwenLine, e *entry, r reader) {
	for _, p := range l.Message.Parts {
		if p.Call != nil {
			r.call(e, p.Call.Name, args(p.Call.Args))
		}
	}
	if t, ok := userText(l.Message.Parts); ok && l.Type == "user" {
		e.user(t)
	}
}
