package fakeapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// stopReason is "tool_use" when reply calls a tool, else "end_turn".
func stopReason(reply []Block) string {
	for _, b := range reply {
		if b.Type == "tool_use" {
			return "tool_use"
		}
	}
	return "end_turn"
}

// writeStream sends reply as the Server-Sent Events of a streamed message:
// message_start, a start/delta/stop triple per block, message_delta, message_stop.
func writeStream(w http.ResponseWriter, id, model string, reply []Block) error {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	events := []any{map[string]any{
		"type": "message_start",
		"message": map[string]any{
			"id": id, "type": "message", "role": "assistant", "model": model,
			"content": []any{}, "stop_reason": nil, "stop_sequence": nil,
			"usage": map[string]any{"input_tokens": 1, "output_tokens": 1},
		},
	}}
	for i, b := range reply {
		var start, delta map[string]any
		switch b.Type {
		case "text":
			start = map[string]any{"type": "text", "text": ""}
			delta = map[string]any{"type": "text_delta", "text": b.Text}
		case "tool_use":
			in, err := json.Marshal(b.Input)
			if err != nil {
				return fmt.Errorf("tool input: %w", err)
			}
			start = map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": map[string]any{}}
			delta = map[string]any{"type": "input_json_delta", "partial_json": string(in)}
		default:
			return fmt.Errorf("cannot stream a %q block", b.Type)
		}
		events = append(events,
			map[string]any{"type": "content_block_start", "index": i, "content_block": start},
			map[string]any{"type": "content_block_delta", "index": i, "delta": delta},
			map[string]any{"type": "content_block_stop", "index": i})
	}
	events = append(events,
		map[string]any{
			"type":  "message_delta",
			"delta": map[string]any{"stop_reason": stopReason(reply), "stop_sequence": nil},
			"usage": map[string]any{"output_tokens": 1},
		},
		map[string]any{"type": "message_stop"})
	for _, e := range events {
		if err := writeEvent(w, e); err != nil {
			return err
		}
	}
	return nil
}

func writeEvent(w io.Writer, e any) error {
	data, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e.(map[string]any)["type"], data)
	return err
}

// message returns reply as a whole, non-streamed Messages API response.
func message(id, model string, reply []Block) map[string]any {
	content := []any{}
	for _, b := range reply {
		switch b.Type {
		case "tool_use":
			content = append(content, map[string]any{"type": "tool_use", "id": b.ID, "name": b.Name, "input": b.Input})
		default:
			content = append(content, map[string]any{"type": b.Type, "text": b.Text})
		}
	}
	return map[string]any{
		"id": id, "type": "message", "role": "assistant", "model": model,
		"content": content, "stop_reason": stopReason(reply), "stop_sequence": nil,
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1},
	}
}
