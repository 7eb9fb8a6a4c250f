package fakellm

import (
	"encoding/json"
	"net/http"
)

// geminiRequest is the part of a generateContent request the fake reads.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text         string `json:"text"`
			FunctionCall *struct {
				Name string         `json:"name"`
				Args map[string]any `json:"args"`
			} `json:"functionCall"`
			FunctionResponse *struct {
				Name     string `json:"name"`
				Response any    `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string `json:"responseMimeType"`
		ResponseJSONSchema any    `json:"responseJsonSchema"`
		ResponseSchema     any    `json:"responseSchema"`
	} `json:"generationConfig"`
}

func decodeGemini(body []byte) (*Request, error) {
	var g geminiRequest
	if err := json.Unmarshal(body, &g); err != nil {
		return nil, err
	}
	r := &Request{JSON: g.GenerationConfig.ResponseMimeType == "application/json" ||
		g.GenerationConfig.ResponseJSONSchema != nil || g.GenerationConfig.ResponseSchema != nil}
	for _, t := range g.Tools {
		for _, f := range t.FunctionDeclarations {
			r.Tools = append(r.Tools, f.Name)
		}
	}
	for _, c := range g.Contents {
		m := Message{Role: "user"}
		if c.Role == "model" {
			m.Role = "assistant"
		}
		for _, p := range c.Parts {
			switch {
			case p.FunctionCall != nil:
				// Gemini pairs a result with its call by the function's name.
				m.Calls = append(m.Calls, Call{ID: p.FunctionCall.Name, Name: p.FunctionCall.Name, Args: p.FunctionCall.Args})
			case p.FunctionResponse != nil:
				out, _ := json.Marshal(p.FunctionResponse.Response)
				r.Messages = append(r.Messages, Message{Role: "tool", Text: string(out), CallID: p.FunctionResponse.Name})
				continue
			default:
				m.Text += p.Text
			}
		}
		if m.Text != "" || len(m.Calls) > 0 {
			r.Messages = append(r.Messages, m)
		}
	}
	return r, nil
}

// geminiChunk is one streamed GenerateContentResponse holding all of reply.
func geminiChunk(reply []Part) map[string]any {
	var parts []any
	for _, p := range reply {
		if p.Call != nil {
			parts = append(parts, map[string]any{"functionCall": map[string]any{"name": p.Call.Name, "args": p.Call.Args}})
		} else {
			parts = append(parts, map[string]any{"text": p.Text})
		}
	}
	return map[string]any{
		"candidates": []any{map[string]any{
			"content":      map[string]any{"role": "model", "parts": parts},
			"finishReason": "STOP",
			"index":        0,
		}},
		"usageMetadata": map[string]any{"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
		"modelVersion":  "gemini-2.5-flash",
	}
}

// streamGemini answers streamGenerateContent?alt=sse: one data event per chunk.
func streamGemini(w http.ResponseWriter, _ *Request, reply []Part, _ string) error {
	startSSE(w)
	return sse(w, "", geminiChunk(reply))
}

// plainGemini answers generateContent: the same response as one JSON body.
func plainGemini(w http.ResponseWriter, _ *Request, reply []Part, _ string) error {
	writeJSON(w, geminiChunk(reply))
	return nil
}
