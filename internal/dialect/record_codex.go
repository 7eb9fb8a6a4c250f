package dialect

import (
	"encoding/json"
	"strings"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/transcript"
)

// Codex records a session in a rollout JSONL ($CODEX_HOME/sessions/…), a
// subagent in its own (agent_transcript_path). What the gate reads there:
//
//	{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"cat p.md\",\"workdir\":…}"}}
//	{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<hook_prompt hook_run_id=\"stop:…\">REASON</hook_prompt>"}]}}
//	{"type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"what a person typed"}]}}
//
// A read is a shell command, judged by the analysis detect uses (guard.ShellReads).
func (codex) Where(in *hook.Input, agent string) (string, transcript.Thread) {
	return ownFiles(in, agent)
}

func (codex) Scan(path string, offset int64, thread transcript.Thread, cwd string) (*transcript.Result, error) {
	return scanLines(codexLines, path, offset, thread, cwd)
}

var codexLines = lines(func(l *codexLine) bool { return l.Type == "response_item" }, `"function_call"`, `"local_shell_call"`, `"role":"user"`)

type codexLine struct {
	stamp
	Type    string `json:"type"`
	Payload struct {
		Type      string          `json:"type"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Action    json.RawMessage `json:"action"` // local_shell_call
		Role      string          `json:"role"`
		Content   []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"payload"`
}

func (*codexLine) agent() string { return "" } // a rollout is one thread's

func (l *codexLine) reads(cwd string) []string {
	var a map[string]any
	switch l.Payload.Type {
	case "function_call":
		a = args(l.Payload.Arguments)
	case "local_shell_call":
		a = args(l.Payload.Action)
	default:
		return nil
	}
	cmd := shellText(a["cmd"])
	if cmd == "" {
		cmd = shellText(a["command"])
	}
	if cmd == "" {
		return nil
	}
	if d, _ := a["workdir"].(string); d != "" {
		cwd = abs(d, cwd)
	}
	return shellReads(cmd, cwd)
}

func (*codexLine) command() string { return "" } // a skill is read with a shell command: a read

func (l *codexLine) text() (string, bool) {
	if l.Payload.Type != "message" || l.Payload.Role != "user" {
		return "", false
	}
	var texts []string
	for _, c := range l.Payload.Content {
		if c.Type == "input_text" {
			texts = append(texts, c.Text)
		}
	}
	return strings.Join(texts, "\n"), len(texts) > 0
}

func (l *codexLine) typed() (string, bool) {
	t, ok := l.text()
	// Codex's own insertions (environment, instructions, hook prompts) are
	// tagged; what a person typed is not.
	return t, ok && !strings.HasPrefix(t, "<")
}

func (l *codexLine) block() (string, string, bool) {
	t, ok := l.text()
	if !ok || !strings.HasPrefix(t, "<hook_prompt ") {
		return "", "", false
	}
	_, reason, _ := strings.Cut(t, ">")
	return reason, "", true
}
