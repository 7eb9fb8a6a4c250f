package dialect

import (
	"encoding/json"
	"strings"
	"time"

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
// A read is a shell command, judged by the analysis detect uses (ShellReads).
func (codex) Where(in *hook.Input, agent string) (string, transcript.Thread) {
	if agent != "" && in.AgentTranscriptPath != "" {
		return in.AgentTranscriptPath, transcript.Thread{Agent: agent, Own: true}
	}
	return in.TranscriptPath, transcript.Thread{Agent: agent}
}

func (codex) Scan(path string, offset int64, thread transcript.Thread, cwd string) (*transcript.Result, error) {
	return scanLines(codexLines{}, path, offset, thread, cwd)
}

type codexLines struct{}

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

func (codexLines) decode(b []byte) line {
	if !containsAny(b, `"function_call"`, `"local_shell_call"`, `"role":"user"`) {
		return nil
	}
	var l codexLine
	if json.Unmarshal(b, &l) != nil || l.Type != "response_item" {
		return nil
	}
	return &l
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
	return ShellReads(cmd, cwd)
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
	return scanLines(geminiLines{}, path, offset, thread, cwd)
}

type geminiLines struct{}

type geminiLine struct {
	stamp
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	ToolCalls []struct {
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"toolCalls"`
}

func (geminiLines) decode(b []byte) line {
	if !containsAny(b, `"toolCalls"`, `"type":"user"`) {
		return nil
	}
	var l geminiLine
	if json.Unmarshal(b, &l) != nil {
		return nil
	}
	return &l
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
			out = append(out, ShellReads(cmd, dir)...)
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

// Copilot CLI records a session in events.jsonl
// (~/.copilot/session-state/<id>/), a subagent's lines in it with their
// agentId, and every hook's input and output:
//
//	{"type":"tool.execution_start","data":{"toolName":"view","arguments":{"path":…}}}
//	{"type":"hook.end","data":{"hookType":"agentStop","output":{"decision":"block","reason":…}}}
//	{"type":"user.message","data":{"content":"what a person typed"}}
func (copilot) Where(in *hook.Input, agent string) (string, transcript.Thread) {
	return in.TranscriptPath, transcript.Thread{Agent: agent}
}

func (copilot) Scan(path string, offset int64, thread transcript.Thread, cwd string) (*transcript.Result, error) {
	return scanLines(copilotLines{}, path, offset, thread, cwd)
}

type copilotLines struct{}

type copilotLine struct {
	stamp
	Type    string `json:"type"`
	AgentID string `json:"agentId"`
	Data    struct {
		ToolName  string          `json:"toolName"`
		Arguments json.RawMessage `json:"arguments"`
		Content   json.RawMessage `json:"content"`
		HookType  string          `json:"hookType"`
		Output    struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		} `json:"output"`
	} `json:"data"`
}

func (copilotLines) decode(b []byte) line {
	if !containsAny(b, `"tool.execution_start"`, `"hook.end"`, `"user.message"`) {
		return nil
	}
	var l copilotLine
	if json.Unmarshal(b, &l) != nil {
		return nil
	}
	return &l
}

func (l *copilotLine) agent() string { return l.AgentID }

func (l *copilotLine) reads(cwd string) []string {
	if l.Type != "tool.execution_start" {
		return nil
	}
	a := args(l.Data.Arguments)
	switch l.Data.ToolName {
	case "view":
	case "str_replace_editor", "edit":
		if c, _ := a["command"].(string); c != "view" {
			return nil
		}
	case "bash":
		cmd, _ := a["command"].(string)
		return ShellReads(cmd, cwd)
	default:
		return nil
	}
	p, _ := a["path"].(string)
	if p = abs(p, cwd); p != "" {
		return []string{p}
	}
	return nil
}

func (l *copilotLine) command() string {
	if l.Type != "tool.execution_start" || l.Data.ToolName != "skill" {
		return ""
	}
	name, _ := args(l.Data.Arguments)["skill"].(string)
	return name
}

func (l *copilotLine) typed() (string, bool) {
	if l.Type != "user.message" {
		return "", false
	}
	var s string
	json.Unmarshal(l.Data.Content, &s)
	// A fed-back block is a user message too: its hook.end counts it.
	return s, s != "" && !fedBack(s)
}

func (l *copilotLine) block() (string, string, bool) {
	if l.Type != "hook.end" || l.Data.Output.Decision != "block" {
		return "", "", false
	}
	event, ok := copilotEvent[l.Data.HookType]
	if !ok || (event != hook.Stop && event != hook.SubagentStop) {
		return "", "", false
	}
	return l.Data.Output.Reason, event, true
}

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
	return scanLines(opencodeLines{}, path, offset, thread, cwd)
}

type opencodeLines struct{}

type opencodeLine struct {
	Role  string `json:"role"`
	Parts []struct {
		Type  string         `json:"type"`
		Tool  string         `json:"tool"`
		Input map[string]any `json:"input"`
		Text  string         `json:"text"`
	} `json:"parts"`
}

func (opencodeLines) decode(b []byte) line {
	var l opencodeLine
	if json.Unmarshal(b, &l) != nil {
		return nil
	}
	return &l
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
			out = append(out, ShellReads(cmd, dir)...)
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

// mainThread is Where for a client whose record holds its main thread alone.
func mainThread(in *hook.Input, agent string) (string, transcript.Thread) {
	if agent != "" {
		return "", transcript.Thread{}
	}
	return in.TranscriptPath, transcript.Thread{}
}

// fedBack says whether a user message is a stop block the client fed back
// rather than what a person typed: the record tells them apart only by the
// gate's own prefix.
func fedBack(text string) bool { return strings.HasPrefix(text, hook.BlockPrefix) }
