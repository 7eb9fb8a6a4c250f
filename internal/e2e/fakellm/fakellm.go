// Package fakellm is a scripted stand-in for the model APIs the agent clients other
// than Claude Code speak, for driving them in end-to-end tests on loopback, with no
// network and no account: one Server per wire protocol,
//
//	Gemini     POST /v1beta/models/{model}:streamGenerateContent?alt=sse (Gemini CLI)
//	Responses  POST /v1/responses, streamed (Codex)
//	Chat       POST /v1/chat/completions, streamed (Copilot CLI, OpenCode)
//
// each decoding the request into one conversation shape (Request) and answering with
// the first Turn of its Script that has a reply, streamed the way the real API does.
// Package fakeapi is the same for Anthropic's Messages API.
package fakellm

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// Protocol is a wire protocol a Server speaks.
type Protocol int

// The protocols.
const (
	Gemini Protocol = iota
	Responses
	Chat
)

// Message is one message of a conversation, in any protocol.
type Message struct {
	Role   string // "system", "user", "assistant" or "tool"
	Text   string // its text; a tool result's output
	Calls  []Call // an assistant's tool calls
	CallID string // a tool result's call
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

// Request is one model request, decoded.
type Request struct {
	Protocol Protocol
	Model    string
	Messages []Message
	Tools    []string // the tools the client offers, by name
	JSON     bool     // the client asks for a JSON answer (a side request)
	Raw      json.RawMessage
}

// Latest is the text of the messages after the last assistant one: what the client
// told the model since its last turn (a tool result, a hook's block reason).
func (r *Request) Latest() string {
	var b strings.Builder
	for i := len(r.Messages) - 1; i >= 0 && r.Messages[i].Role != "assistant"; i-- {
		b.WriteString(r.Messages[i].Text)
		b.WriteString("\n")
	}
	return b.String()
}

// Turns counts the assistant messages so far.
func (r *Request) Turns() int {
	n := 0
	for _, m := range r.Messages {
		if m.Role == "assistant" {
			n++
		}
	}
	return n
}

// Has reports whether any message contains s.
func (r *Request) Has(s string) bool {
	for _, m := range r.Messages {
		if strings.Contains(m.Text, s) {
			return true
		}
	}
	return false
}

// Part is one piece of a reply: text, or a tool call.
type Part struct {
	Text string
	Call *Call
}

// Text is a text reply part.
func Text(s string) Part { return Part{Text: s} }

// Tool is a tool call reply part.
func Tool(name string, args map[string]any) Part {
	return Part{Call: &Call{Name: name, Args: args}}
}

// Turn answers a request, or returns nil to leave it to the next Turn.
type Turn func(r *Request) []Part

// Script is a scenario: each request is answered by its first Turn with a reply.
type Script []Turn

// When answers reply to the requests m accepts.
func When(m func(*Request) bool, reply ...Part) Turn {
	return func(r *Request) []Part {
		if m(r) {
			return reply
		}
		return nil
	}
}

// Server is a running fake model API. It stops when its test ends.
type Server struct {
	t        testing.TB
	protocol Protocol
	script   Script
	http     *httptest.Server
	log      bool

	mu       sync.Mutex
	requests []*Request
	calls    int
}

// Start starts a Server for protocol on 127.0.0.1. STOPGATE_FAKELLM_LOG=1 logs each
// request.
func Start(t testing.TB, protocol Protocol, script Script) *Server {
	t.Helper()
	s := &Server{t: t, protocol: protocol, script: script, log: os.Getenv("STOPGATE_FAKELLM_LOG") == "1"}
	s.http = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.http.Close)
	return s
}

// URL is the server's base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.http.URL }

// Requests returns the model requests so far, in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

func (s *Server) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if s.log {
		s.t.Logf("fakellm: %s %s %s", req.Method, req.URL.RequestURI(), truncate(string(body), 2000))
	}
	var r *Request
	var stream func(http.ResponseWriter, []Part, string) error
	path := req.URL.Path
	switch {
	case s.protocol == Gemini && req.Method == http.MethodPost && strings.Contains(path, ":streamGenerateContent"):
		r, err = decodeGemini(body)
		stream = s.streamGemini
	case s.protocol == Gemini && req.Method == http.MethodPost && strings.Contains(path, ":generateContent"):
		r, err = decodeGemini(body)
		stream = s.plainGemini
	case s.protocol == Gemini && strings.Contains(path, ":countTokens"):
		writeJSON(w, map[string]any{"totalTokens": 1})
		return
	case s.protocol == Responses && req.Method == http.MethodPost && strings.HasSuffix(path, "/responses"):
		r, err = decodeResponses(body)
		stream = s.streamResponses
	case s.protocol == Chat && req.Method == http.MethodPost && strings.HasSuffix(path, "/chat/completions"):
		r, err = decodeChat(body)
		stream = s.streamChat
	case req.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		writeJSON(w, map[string]any{"object": "list", "data": []any{map[string]any{"id": "fake-model", "object": "model", "owned_by": "fake"}},
			"models": []any{map[string]any{"slug": "fake-model", "id": "fake-model"}}})
		return
	default:
		http.NotFound(w, req)
		return
	}
	if err != nil {
		s.t.Errorf("fakellm: %s %s: %v", req.Method, path, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Protocol, r.Raw = s.protocol, body
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.calls++
	id := fmt.Sprintf("fake_%d", s.calls)
	s.mu.Unlock()

	reply := s.answer(r)
	for i := range reply {
		if reply[i].Call != nil && reply[i].Call.ID == "" {
			c := *reply[i].Call
			c.ID = fmt.Sprintf("call_%s_%d", id, i)
			reply[i].Call = &c
		}
	}
	if err := stream(w, reply, id); err != nil {
		s.t.Errorf("fakellm: writing the reply: %v", err)
	}
}

// answer is the script's reply; a side request that wants JSON gets a neutral JSON
// object, and a request no Turn answers fails the test with a short text reply.
func (s *Server) answer(r *Request) []Part {
	for _, turn := range s.script {
		if reply := turn(r); reply != nil {
			return reply
		}
	}
	if r.JSON {
		return []Part{Text(`{"reasoning":"fake","next_speaker":"user","model_choice":"flash","complexity_score":1}`)}
	}
	s.t.Errorf("fakellm: no turn answers request %d (latest: %q)", len(s.Requests()), truncate(r.Latest(), 300))
	return []Part{Text("(no scripted answer)")}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

// sse writes one Server-Sent Event; an empty name writes data only.
func sse(w http.ResponseWriter, name string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if name != "" {
		if _, err := fmt.Fprintf(w, "event: %s\n", name); err != nil {
			return err
		}
	}
	_, err = fmt.Fprintf(w, "data: %s\n\n", data)
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	return err
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// text returns the text of a content value: a string, or a list of parts with "text".
func text(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, p := range v {
			if m, ok := p.(map[string]any); ok {
				if t, ok := m["text"].(string); ok {
					b.WriteString(t)
				}
			}
		}
		return b.String()
	}
	return ""
}
