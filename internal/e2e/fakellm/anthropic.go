package fakellm

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// anthropicRequest is the part of a Messages API request the fake reads.
type anthropicRequest struct {
	Model    string `json:"model"`
	System   any    `json:"system"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name string `json:"name"`
	} `json:"tools"`
	Stream bool `json:"stream"`
}

// anthropicBlock is one content block of a request message.
type anthropicBlock struct {
	Type      string         `json:"type"`
	Text      string         `json:"text"`
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Input     map[string]any `json:"input"`
	ToolUseID string         `json:"tool_use_id"`
	IsError   bool           `json:"is_error"`
	Content   any            `json:"content"`
}

func decodeAnthropic(body []byte) (*Request, error) {
	var q anthropicRequest
	if err := json.Unmarshal(body, &q); err != nil {
		return nil, err
	}
	r := &Request{Model: q.Model, System: text(q.System), Stream: q.Stream, Side: len(q.Tools) == 0}
	for _, t := range q.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	for _, m := range q.Messages {
		var blocks []anthropicBlock
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			blocks = []anthropicBlock{{Type: "text", Text: s}}
		} else if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return nil, fmt.Errorf("message content: %w", err)
		}
		msg := Message{Role: m.Role}
		var texts []string
		for _, b := range blocks {
			switch b.Type {
			case "text":
				texts = append(texts, b.Text)
			case "tool_use":
				msg.Calls = append(msg.Calls, Call{ID: b.ID, Name: b.Name, Args: b.Input})
			case "tool_result": // a message of its own, as in the other protocols
				r.Messages = append(r.Messages, Message{Role: "tool", Text: text(b.Content), CallID: b.ToolUseID, IsError: b.IsError})
			}
		}
		msg.Text = strings.Join(texts, "\n")
		if msg.Role == "assistant" || msg.Text != "" {
			r.Messages = append(r.Messages, msg)
		}
	}
	return r, nil
}

// writeAnthropic answers a Messages API request with the whole message or, when the
// client asked for a stream, its Server-Sent Events: message_start, a start/delta/stop
// triple per block, message_delta, message_stop.
func writeAnthropic(w http.ResponseWriter, r *Request, reply []Part, id string) error {
	stop, content := "end_turn", []any{}
	events := []map[string]any{}
	for i, p := range reply {
		block := map[string]any{"type": "text", "text": p.Text}
		start, delta := map[string]any{"type": "text", "text": ""}, map[string]any{"type": "text_delta", "text": p.Text}
		if p.Call != nil {
			args := p.Call.Args
			if args == nil {
				args = map[string]any{}
			}
			in, _ := json.Marshal(args)
			stop = "tool_use"
			block = map[string]any{"type": "tool_use", "id": p.Call.ID, "name": p.Call.Name, "input": args}
			start = map[string]any{"type": "tool_use", "id": p.Call.ID, "name": p.Call.Name, "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(in)}
		}
		content = append(content, block)
		events = append(events,
			map[string]any{"type": "content_block_start", "index": i, "content_block": start},
			map[string]any{"type": "content_block_delta", "index": i, "delta": delta},
			map[string]any{"type": "content_block_stop", "index": i})
	}
	message := map[string]any{"id": "msg_" + id, "type": "message", "role": "assistant", "model": r.Model,
		"content": content, "stop_reason": stop, "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1}}
	if !r.Stream {
		writeJSON(w, message)
		return nil
	}
	startSSE(w)
	message["content"], message["stop_reason"] = []any{}, nil
	events = append([]map[string]any{{"type": "message_start", "message": message}}, events...)
	events = append(events,
		map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": 1}},
		map[string]any{"type": "message_stop"})
	for _, e := range events {
		if err := sse(w, e["type"].(string), e); err != nil {
			return err
		}
	}
	return nil
}
