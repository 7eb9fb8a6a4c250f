package fakeapi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// A Request is one decoded call to the Messages API, as the client sent it.
type Request struct {
	// Path is the URL path with its query, e.g. "/v1/messages?beta=true".
	Path string
	// Model is the requested model name.
	Model string
	// System is the text of all system prompt blocks, joined by newlines.
	System string
	// Messages is the conversation so far, oldest first.
	Messages []Message
	// Tools names the tools offered to the model, in order.
	Tools []string
	// Stream reports whether the client asked for Server-Sent Events.
	Stream bool
	// Side reports whether the request was routed to the side handler
	// rather than the scenario (see Script).
	Side bool
	// Body is the whole request body, decoded.
	Body map[string]any
}

// A Message is one entry of a request's messages array. A plain string content is
// decoded as a single text block.
type Message struct {
	Role    string  `json:"role"`
	Content []Block `json:"content"`
}

// A Block is one content block, of a request message or of a reply.
type Block struct {
	Type string `json:"type"`
	// Text is the text of a text block, or the text of a tool_result's content.
	Text string `json:"text,omitempty"`
	// ID, Name and Input describe a tool_use block.
	ID    string         `json:"id,omitempty"`
	Name  string         `json:"name,omitempty"`
	Input map[string]any `json:"input,omitempty"`
	// ToolUseID and IsError describe a tool_result block.
	ToolUseID string `json:"tool_use_id,omitempty"`
	IsError   bool   `json:"is_error,omitempty"`
}

func (m *Message) UnmarshalJSON(data []byte) error {
	var raw struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	m.Role = raw.Role
	var s string
	if json.Unmarshal(raw.Content, &s) == nil {
		m.Content = []Block{{Type: "text", Text: s}}
		return nil
	}
	return json.Unmarshal(raw.Content, &m.Content)
}

func (b *Block) UnmarshalJSON(data []byte) error {
	type plain Block // no methods: no recursion
	var raw struct {
		plain
		Content json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*b = Block(raw.plain)
	if len(raw.Content) == 0 || b.Type != "tool_result" {
		return nil
	}
	// A tool_result's content is a string or a list of blocks; keep its text.
	var s string
	if json.Unmarshal(raw.Content, &s) == nil {
		b.Text = s
		return nil
	}
	var inner []Block
	if err := json.Unmarshal(raw.Content, &inner); err != nil {
		return fmt.Errorf("tool_result content: %w", err)
	}
	var texts []string
	for _, c := range inner {
		if c.Text != "" {
			texts = append(texts, c.Text)
		}
	}
	b.Text = strings.Join(texts, "\n")
	return nil
}

// decodeRequest decodes a Messages API request body.
func decodeRequest(path string, body []byte) (*Request, error) {
	var raw struct {
		Model    string          `json:"model"`
		System   json.RawMessage `json:"system"`
		Messages []Message       `json:"messages"`
		Tools    []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Stream bool `json:"stream"`
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	r := &Request{Path: path, Model: raw.Model, Messages: raw.Messages, Stream: raw.Stream}
	if err := json.Unmarshal(body, &r.Body); err != nil {
		return nil, fmt.Errorf("decode request: %w", err)
	}
	for _, t := range raw.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	if len(raw.System) > 0 {
		var s string
		var blocks []Block
		if json.Unmarshal(raw.System, &s) == nil {
			r.System = s
		} else if err := json.Unmarshal(raw.System, &blocks); err == nil {
			var texts []string
			for _, b := range blocks {
				texts = append(texts, b.Text)
			}
			r.System = strings.Join(texts, "\n")
		}
	}
	return r, nil
}

// Last returns the last message, or the zero Message if there is none.
func (r *Request) Last() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// Latest returns the messages after the model's last turn: what the client has just
// told the model (tool results, hook feedback, and any role "system" entries it appends).
func (r *Request) Latest() []Message {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "assistant" {
			return r.Messages[i+1:]
		}
	}
	return r.Messages
}

// Subagent reports whether the request comes from a subagent thread: the client marks
// those with cc_is_subagent=true in the billing header of the system prompt.
func (r *Request) Subagent() bool {
	return strings.Contains(r.System, "cc_is_subagent=true")
}

// Assistants counts the assistant messages: how many model turns the thread has had.
func (r *Request) Assistants() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// Contains reports whether any message block (text, tool input or tool result) holds s.
func (r *Request) Contains(s string) bool {
	for _, m := range r.Messages {
		if m.Contains(s) {
			return true
		}
	}
	return false
}

// FirstUser returns the text of the first user message: for a subagent, its task.
func (r *Request) FirstUser() string {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return m.String()
		}
	}
	return ""
}

// ToolUses returns every tool_use block in the conversation, oldest first.
func (r *Request) ToolUses() []Block {
	var out []Block
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_use" {
				out = append(out, b)
			}
		}
	}
	return out
}

// ToolResults returns every tool_result block in the conversation, oldest first.
func (r *Request) ToolResults() []Block {
	var out []Block
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == "tool_result" {
				out = append(out, b)
			}
		}
	}
	return out
}

// Contains reports whether any block of m holds s in its text or tool input.
func (m Message) Contains(s string) bool {
	return strings.Contains(m.String(), s)
}

// String returns all the text of m: text blocks, tool results and tool inputs as JSON.
func (m Message) String() string {
	var sb strings.Builder
	for _, b := range m.Content {
		if b.Text != "" {
			sb.WriteString(b.Text)
			sb.WriteByte('\n')
		}
		if b.Input != nil {
			in, _ := json.Marshal(b.Input)
			sb.Write(in)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}
