package dialect

import (
	"encoding/json"
	"strings"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/transcript"
)

// Gemini CLI records a session in a JSONL session file
// (~/.gemini/tmp/<project>/chats/session-….jsonl); a message is written
// again when its tool calls complete, and "$set" lines update metadata:
//
//	{"type":"gemini","toolCalls":[{"name":"read_file","args":{"file_path":…}}],…}
//	{"type":"user","content":[{"text":"what a person typed, or a fed-back block reason"}]}
//
// A fed-back block is a user message like a typed one: it is told by the
// gate's own prefix. Subagents fire no hooks: the file is the main thread's.
func (gemini) Where(in *hook.Input, agent string) (string, transcript.Thread) {
	return mainThread(in, agent)
}

func (gemini) Scan(path string, offset int64, thread transcript.Thread, cwd string) (*transcript.Result, error) {
	return scanLines(geminiLines, path, offset, thread, cwd)
}

var geminiLines = lines[geminiLine](nil, `"toolCalls"`, `"type":"user"`)

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

func (l *geminiLine) reads(cwd string) []string {
	var out []string
	for _, c := range l.ToolCalls {
		a := args(c.Args)
		switch c.Name {
		case "read_file":
			p, _ := a["file_path"].(string)
			if p == "" {
				p, _ = a["absolute_path"].(string)
			}
			if p = abs(p, cwd); p != "" {
				out = append(out, p)
			}
		case "read_many_files":
			out = append(out, manyFiles(a, cwd)...)
		case "run_shell_command":
			dir := cwd
			if d, _ := a["dir_path"].(string); d != "" {
				dir = abs(d, cwd)
			}
			cmd, _ := a["command"].(string)
			out = append(out, shellReads(cmd, dir)...)
		}
	}
	return out
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

func (l *geminiLine) typed() (string, bool) {
	t, ok := l.text()
	return t, ok && !fedBack(t)
}

func (l *geminiLine) block() (string, string, bool) {
	t, ok := l.text()
	return t, "", ok && fedBack(t)
}
