package fakellm

import (
	"encoding/json"
	"net/http"
	"time"
)

// chatRequest is the part of a Chat Completions request the fake reads.
type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	ResponseFormat *struct {
		Type string `json:"type"`
	} `json:"response_format"`
}

func decodeChat(body []byte) (*Request, error) {
	var c chatRequest
	if err := json.Unmarshal(body, &c); err != nil {
		return nil, err
	}
	r := &Request{Model: c.Model, JSON: c.ResponseFormat != nil && c.ResponseFormat.Type != "text"}
	for _, t := range c.Tools {
		r.Tools = append(r.Tools, t.Function.Name)
	}
	for _, m := range c.Messages {
		msg := Message{Role: m.Role, Text: text(m.Content), CallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			var args map[string]any
			json.Unmarshal([]byte(tc.Function.Arguments), &args)
			msg.Calls = append(msg.Calls, Call{ID: tc.ID, Name: tc.Function.Name, Args: args})
		}
		r.Messages = append(r.Messages, msg)
	}
	return r, nil
}

// streamChat answers a streamed chat completion: a role chunk, a chunk per text or
// tool call, a finish chunk, and [DONE].
func streamChat(w http.ResponseWriter, _ *Request, reply []Part, id string) error {
	startSSE(w)
	created := time.Now().Unix()
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": "fake-model",
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	if err := sse(w, "", chunk(map[string]any{"role": "assistant", "content": ""}, nil)); err != nil {
		return err
	}
	finish := "stop"
	calls := 0
	for _, p := range reply {
		if p.Call == nil {
			if err := sse(w, "", chunk(map[string]any{"content": p.Text}, nil)); err != nil {
				return err
			}
			continue
		}
		args, _ := json.Marshal(p.Call.Args)
		finish = "tool_calls"
		tc := map[string]any{"index": calls, "id": p.Call.ID, "type": "function",
			"function": map[string]any{"name": p.Call.Name, "arguments": string(args)}}
		calls++
		if err := sse(w, "", chunk(map[string]any{"tool_calls": []any{tc}}, nil)); err != nil {
			return err
		}
	}
	last := chunk(map[string]any{}, finish)
	last["usage"] = map[string]any{"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}
	if err := sse(w, "", last); err != nil {
		return err
	}
	_, err := w.Write([]byte("data: [DONE]\n\n"))
	return err
}
