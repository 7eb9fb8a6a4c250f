// Package fakellm is a scripted stand-in for the model APIs the agent clients speak, for
// driving the real clients in end-to-end tests on loopback, with no network and no
// account: one Server per wire protocol,
//
//	Anthropic  POST /v1/messages (Claude Code)
//	Gemini     POST /v1beta/models/{model}:streamGenerateContent?alt=sse (Gemini CLI)
//	Responses  POST /v1/responses, streamed (Codex)
//	Chat       POST /v1/chat/completions, streamed (Copilot CLI, OpenCode)
//
// each decoding the request into one conversation shape (Request), answering with the
// first Turn of its Script that has a reply, written the way the real API does, and
// recording every request so a test can check what the model was told.
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
	Anthropic Protocol = iota
	Gemini
	Responses
	Chat
)

// A route is one kind of model request of a protocol: the end of its URL path, how
// its body decodes and how its reply is written.
type route struct {
	suffix string
	decode func(body []byte) (*Request, error)
	write  func(w http.ResponseWriter, r *Request, reply []Part, id string) error
}

var routes = map[Protocol][]route{
	Anthropic: {{"/messages", decodeAnthropic, writeAnthropic}},
	Gemini:    {{":streamGenerateContent", decodeGemini, streamGemini}, {":generateContent", decodeGemini, plainGemini}},
	Responses: {{"/responses", decodeResponses, streamResponses}},
	Chat:      {{"/chat/completions", decodeChat, streamChat}},
}

// Server is a running fake model API. It stops when its test ends.
type Server struct {
	t        testing.TB
	protocol Protocol
	script   Script
	http     *httptest.Server
	log      bool
	// Sides: the script answers side requests too, e.g. a stopgate
	// judge's, which offers no tools. Set it before the first request.
	Sides bool

	mu       sync.Mutex
	requests []*Request
	others   []string
}

// Start starts a Server for protocol on 127.0.0.1 at a free port. Setting
// STOPGATE_FAKELLM_LOG=1 logs every request and reply.
func Start(t testing.TB, protocol Protocol, script Script) *Server {
	t.Helper()
	s := &Server{t: t, protocol: protocol, script: script, log: os.Getenv("STOPGATE_FAKELLM_LOG") == "1"}
	s.http = httptest.NewServer(http.HandlerFunc(s.serve)) // httptest binds 127.0.0.1:0
	t.Cleanup(s.http.Close)
	return s
}

// URL is the server's base URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.http.URL }

// Requests returns the model requests so far (side ones too), in arrival order.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.requests...)
}

// Others returns "METHOD PATH" for each request that was not a model request.
func (s *Server) Others() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.others...)
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
	rt, ok := s.route(req)
	if !ok {
		s.other(w, req)
		return
	}
	r, err := rt.decode(body)
	if err != nil {
		s.t.Errorf("fakellm: %s %s: %v", req.Method, req.URL.Path, err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.requests = append(s.requests, r)
	id := fmt.Sprintf("fake_%d", len(s.requests))
	s.mu.Unlock()
	reply := s.answer(r, id)
	if s.log {
		s.t.Logf("fakellm: %s side=%v turn=%d -> %s", id, r.Side, r.Turns(), summary(reply))
	}
	if err := rt.write(w, r, reply, id); err != nil {
		s.t.Errorf("fakellm: writing reply %s: %v", id, err)
	}
}

// route finds the model request req is in the server's protocol.
func (s *Server) route(req *http.Request) (route, bool) {
	if req.Method == http.MethodPost {
		for _, rt := range routes[s.protocol] {
			if strings.HasSuffix(req.URL.Path, rt.suffix) {
				return rt, true
			}
		}
	}
	return route{}, false
}

// other answers a request that is not a model request and records it: a new client
// version may ask for something the fake should serve.
func (s *Server) other(w http.ResponseWriter, req *http.Request) {
	s.mu.Lock()
	s.others = append(s.others, req.Method+" "+req.URL.RequestURI())
	s.mu.Unlock()
	path := req.URL.Path
	switch {
	case strings.HasSuffix(path, "/count_tokens"): // Anthropic
		writeJSON(w, map[string]any{"input_tokens": 1})
	case strings.HasSuffix(path, ":countTokens"): // Gemini
		writeJSON(w, map[string]any{"totalTokens": 1})
	case req.Method == http.MethodGet && strings.HasSuffix(path, "/models"):
		writeJSON(w, map[string]any{"object": "list", "has_more": false,
			"data":   []any{map[string]any{"id": "fake-model", "object": "model", "owned_by": "fake"}},
			"models": []any{map[string]any{"slug": "fake-model", "id": "fake-model"}}})
	default:
		http.NotFound(w, req)
	}
}

// answer is the reply to request id, its tool calls given ids: a Claude Code side
// request gets a harmless text, so that it never consumes a scenario's Turn; else the
// first Turn with a reply answers; failing that, a side request that wants JSON gets a
// neutral object, and any other request fails the test.
func (s *Server) answer(r *Request, id string) []Part {
	reply := []Part{Text("ok")}
	if !r.Side || s.Sides {
		reply = s.script.answer(r)
	}
	if reply == nil && r.JSON {
		reply = []Part{Text(`{"reasoning":"fake","next_speaker":"user","model_choice":"flash","complexity_score":1}`)}
	}
	if reply == nil {
		s.t.Errorf("fakellm: no turn answers request %s (turn %d, latest %q)", id, r.Turns(), truncate(r.Latest(), 300))
		reply = []Part{Text("fakellm: no turn answers this request")}
	}
	// Copy: a Turn may give the same parts to several requests.
	reply = append([]Part(nil), reply...)
	for i, p := range reply {
		if p.Call != nil && p.Call.ID == "" {
			c := *p.Call
			c.ID = fmt.Sprintf("call_%s_%d", id, i)
			reply[i].Call = &c
		}
	}
	return reply
}

// summary describes reply in a log line.
func summary(reply []Part) string {
	var parts []string
	for _, p := range reply {
		if p.Call != nil {
			parts = append(parts, p.Call.Name+"(…)")
		} else {
			parts = append(parts, fmt.Sprintf("%.40q", p.Text))
		}
	}
	return strings.Join(parts, " ")
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(v)
}

func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
