package fakellm

import (
	"encoding/json"
	"strings"
)

// Request is one model request, decoded.
type Request struct {
	Model    string
	System   string // the system prompt, where the protocol sends it apart (Anthropic)
	Messages []Message
	Tools    []string // the tools the client offers, by name
	Stream   bool     // the client asks for Server-Sent Events (Anthropic)
	// Side marks a Claude Code side request (it offers no tools, unlike the turns of
	// agent threads): the Server answers it without the Script.
	Side bool
	JSON bool // the client asks for a JSON answer (a side request)
}

// Message is one message of a conversation, in any protocol.
type Message struct {
	Role    string // "system", "user", "assistant" or "tool"
	Text    string // its text; a tool result's output
	Calls   []Call // an assistant's tool calls
	CallID  string // a tool result's call
	IsError bool   // a tool result reports an error (Anthropic)
}

// Call is a tool call: a name and its arguments as JSON.
type Call struct {
	ID     string
	Name   string
	Args   map[string]any
	Custom string // a freeform tool's input (Responses' custom tools), instead of Args
	// Namespace is the Responses namespace tool holding Name (Codex's multi_agent_v1).
	Namespace string
}

// latest returns the messages after the model's last turn: what the client told it
// since (tool results, hook feedback, system notes).
func (r *Request) latest() []Message {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "assistant" {
			return r.Messages[i+1:]
		}
	}
	return r.Messages
}

// Latest is the text of the messages after the model's last turn, one a line: e.g. a
// tool's result or a hook's block reason.
func (r *Request) Latest() string {
	var b strings.Builder
	for _, m := range r.latest() {
		b.WriteString(m.Text)
		b.WriteString("\n")
	}
	return b.String()
}

// Turns counts the assistant messages: how many model turns the thread has had.
func (r *Request) Turns() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// Has reports whether any message holds s, in its text or a tool call's input.
func (r *Request) Has(s string) bool {
	for _, m := range r.Messages {
		if strings.Contains(m.Text, s) {
			return true
		}
		for _, c := range m.Calls {
			args, _ := json.Marshal(c.Args)
			if strings.Contains(string(args), s) || strings.Contains(c.Custom, s) {
				return true
			}
		}
	}
	return false
}

// text returns the text of a content value: a string, or the texts of a list of
// parts, one a line.
func text(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var texts []string
		for _, p := range v {
			if m, ok := p.(map[string]any); ok {
				if t, ok := m["text"].(string); ok && t != "" {
					texts = append(texts, t)
				}
			}
		}
		return strings.Join(texts, "\n")
	}
	return ""
}
