package dialect

import (
	"encoding/json"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/transcript"
)

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
	return scanLines(copilotLines, path, offset, thread, cwd)
}

var copilotLines = lines[copilotLine](nil, `"tool.execution_start"`, `"hook.end"`, `"user.message"`)

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
		return shellReads(cmd, cwd)
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
