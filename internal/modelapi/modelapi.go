// Package modelapi asks a model one question over HTTP: its own package, so detect links no net/http.
package modelapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
)

// Ask posts the question (Anthropic or OpenAI) and returns the text and tokens; the key goes in a header alone.
func Ask(ctx context.Context, api, endpoint, model, key, system, user string) (text string, in, out int, err error) {
	body := map[string]any{"model": model, "max_tokens": 1024, "system": system,
		"messages": []map[string]string{{"role": "user", "content": user}}}
	headers := map[string]string{"x-api-key": key, "anthropic-version": "2023-06-01", "Content-Type": "application/json"}
	if api == "openai" {
		body = map[string]any{"model": model, "messages": []map[string]string{
			{"role": "system", "content": system}, {"role": "user", "content": user}}}
		headers = map[string]string{"Authorization": "Bearer " + key, "Content-Type": "application/json"}
	}
	data, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(data))
	if err != nil {
		return "", 0, 0, err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", 0, 0, fmt.Errorf("cannot reach %s: %w", endpoint, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return "", 0, 0, fmt.Errorf("reading the answer: %w", err)
	}
	if resp.StatusCode/100 != 2 {
		return "", 0, 0, fmt.Errorf("%s answered %s: %s", endpoint, resp.Status, cli.Clip(cli.OneLine(string(raw)), 300, "…"))
	}
	var r struct {
		Content []struct{ Type, Text string }
		Choices []struct{ Message struct{ Content string } }
		Usage   struct {
			InputTokens      int `json:"input_tokens"`
			OutputTokens     int `json:"output_tokens"`
			PromptTokens     int `json:"prompt_tokens"`
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return "", 0, 0, fmt.Errorf("%s answered something other than the %s API's JSON", endpoint, api)
	}
	in, out = r.Usage.InputTokens+r.Usage.PromptTokens, r.Usage.OutputTokens+r.Usage.CompletionTokens
	var b strings.Builder
	for _, c := range r.Content {
		if c.Type == "text" {
			b.WriteString(c.Text)
		}
	}
	for _, c := range r.Choices[:min(len(r.Choices), 1)] {
		b.WriteString(c.Message.Content)
	}
	return b.String(), in, out, nil
}
