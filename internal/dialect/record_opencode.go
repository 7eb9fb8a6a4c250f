package dialect

import (
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/transcript"
)

// OpenCode keeps its record of a session in its own store, given only
// through its SDK: at each stop the plugin writes the session's messages, a
// message a line, to a file of its own and passes it as transcript_path:
//
//	{"role":"assistant","parts":[{"type":"tool","tool":"read","input":{"filePath":…}}]}
//	{"role":"user","parts":[{"type":"text","text":"what a person typed, or a block the plugin sent back"}]}
//
// A block the plugin sends back is the session's next user message: it is
// told by the gate's own prefix. A subagent is a session of its own.
func (opencode) Where(in *hook.Input, agent string) (string, transcript.Thread) {
	return mainThread(in, agent)
}

func (opencode) Scan(path string, offset int64, thread transcript.Thread, cwd string) (*transcript.Result, error) {
	return scanLines(opencodeLines, path, offset, thread, cwd)
}

var opencodeLines = lines[opencodeLine](nil)

type opencodeLine struct {
	Role  string `json:"role"`
	Parts []struct {
		Type  string         `json:"type"`
		Tool  string         `json:"tool"`
		Input map[string]any `json:"input"`
		Text  string         `json:"text"`
	} `json:"parts"`
}

func (*opencodeLine) agent() string { return "" }

func (*opencodeLine) when() time.Time { return time.Time{} } // the plugin keeps no time

func (l *opencodeLine) reads(cwd string) []string {
	var out []string
	for _, p := range l.Parts {
		switch {
		case p.Type != "tool":
		case p.Tool == "read":
			fp, _ := p.Input["filePath"].(string)
			if fp = abs(fp, cwd); fp != "" {
				out = append(out, fp)
			}
		case p.Tool == "bash":
			cmd, _ := p.Input["command"].(string)
			dir := cwd
			if d, _ := p.Input["workdir"].(string); d != "" {
				dir = abs(d, cwd)
			}
			out = append(out, shellReads(cmd, dir)...)
		}
	}
	return out
}

func (l *opencodeLine) command() string {
	for _, p := range l.Parts {
		if p.Type == "tool" && p.Tool == "skill" {
			name, _ := p.Input["name"].(string)
			return name
		}
	}
	return ""
}

func (l *opencodeLine) text() (string, bool) {
	if l.Role != "user" {
		return "", false
	}
	var texts []string
	for _, p := range l.Parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n"), len(texts) > 0
}

func (l *opencodeLine) typed() (string, bool) {
	t, ok := l.text()
	return t, ok && !fedBack(t)
}

func (l *opencodeLine) block() (string, string, bool) {
	t, ok := l.text()
	return t, "", ok && fedBack(t)
}
