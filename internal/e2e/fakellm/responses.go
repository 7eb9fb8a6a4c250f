package fakellm

import (
	"encoding/json"
	"net/http"
)

// responsesRequest is the part of a Responses API request the fake reads.
type responsesRequest struct {
	Model string `json:"model"`
	Input []struct {
		Type      string `json:"type"`
		Role      string `json:"role"`
		Content   any    `json:"content"`
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
		Input     string `json:"input"`
		Namespace string `json:"namespace"`
		CallID    string `json:"call_id"`
		Output    any    `json:"output"`
	} `json:"input"`
	Tools []struct {
		Type string `json:"type"`
		Name string `json:"name"`
	} `json:"tools"`
	Text *struct {
		Format *struct {
			Type string `json:"type"`
		} `json:"format"`
	} `json:"text"`
}

func decodeResponses(body []byte) (*Request, error) {
	var q responsesRequest
	if err := json.Unmarshal(body, &q); err != nil {
		return nil, err
	}
	r := &Request{Model: q.Model, JSON: q.Text != nil && q.Text.Format != nil && q.Text.Format.Type == "json_schema"}
	for _, t := range q.Tools {
		r.Tools = append(r.Tools, t.Name)
	}
	for _, it := range q.Input {
		switch it.Type {
		case "message", "":
			role := it.Role
			if role == "developer" {
				role = "system"
			}
			r.Messages = append(r.Messages, Message{Role: role, Text: text(it.Content)})
		case "function_call", "custom_tool_call", "local_shell_call":
			var args map[string]any
			json.Unmarshal([]byte(it.Arguments), &args)
			c := Call{ID: it.CallID, Name: it.Name, Args: args, Custom: it.Input, Namespace: it.Namespace}
			// Consecutive calls are one assistant turn.
			if n := len(r.Messages); n > 0 && r.Messages[n-1].Role == "assistant" && r.Messages[n-1].Text == "" {
				r.Messages[n-1].Calls = append(r.Messages[n-1].Calls, c)
			} else {
				r.Messages = append(r.Messages, Message{Role: "assistant", Calls: []Call{c}})
			}
		case "function_call_output", "custom_tool_call_output":
			out, ok := it.Output.(string)
			if !ok {
				b, _ := json.Marshal(it.Output)
				out = string(b)
			}
			r.Messages = append(r.Messages, Message{Role: "tool", Text: out, CallID: it.CallID})
		}
	}
	return r, nil
}

// streamResponses answers a streamed response: response.created, an added/done pair
// per output item (with a text delta for a message), response.completed.
func streamResponses(w http.ResponseWriter, _ *Request, reply []Part, id string) error {
	startSSE(w)
	resp := map[string]any{"id": "resp_" + id, "object": "response", "status": "in_progress", "model": "fake-model", "output": []any{}}
	if err := sse(w, "response.created", map[string]any{"type": "response.created", "response": resp}); err != nil {
		return err
	}
	var output []any
	for i, p := range reply {
		var item map[string]any
		switch {
		case p.Call == nil:
			item = map[string]any{"type": "message", "id": "msg_" + id, "role": "assistant", "status": "completed",
				"content": []any{map[string]any{"type": "output_text", "text": p.Text, "annotations": []any{}}}}
		case p.Call.Args == nil:
			item = map[string]any{"type": "custom_tool_call", "id": "ctc_" + p.Call.ID, "call_id": p.Call.ID,
				"name": p.Call.Name, "input": p.Call.Custom, "status": "completed"}
		default:
			args, _ := json.Marshal(p.Call.Args)
			item = map[string]any{"type": "function_call", "id": "fc_" + p.Call.ID, "call_id": p.Call.ID,
				"name": p.Call.Name, "arguments": string(args), "status": "completed"}
			if p.Call.Namespace != "" {
				item["namespace"] = p.Call.Namespace
			}
		}
		if err := sse(w, "response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": i, "item": item}); err != nil {
			return err
		}
		if p.Call == nil {
			if err := sse(w, "response.output_text.delta", map[string]any{"type": "response.output_text.delta",
				"item_id": item["id"], "output_index": i, "content_index": 0, "delta": p.Text}); err != nil {
				return err
			}
		}
		if err := sse(w, "response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i, "item": item}); err != nil {
			return err
		}
		output = append(output, item)
	}
	resp["status"], resp["output"] = "completed", output
	resp["usage"] = map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
		"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}
	return sse(w, "response.completed", map[string]any{"type": "response.completed", "response": resp})
}
