// Package fakeapi is a scripted stand-in for the Anthropic Messages API, for driving the
// real Claude Code client in end-to-end tests without a network or an account.
//
// A Server listens on loopback only, answers each model request with the first Turn of
// its Script that has an answer, streams the answer as Server-Sent Events the way the real
// API does, and records every request so a test can check what the model was told.
package fakeapi

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

// A Server is a running fake Messages API. It stops when its test ends.
type Server struct {
	t      testing.TB
	http   *httptest.Server
	script Script
	log    bool

	mu       sync.Mutex
	requests []*Request
	others   []string
	next     int
}

// Start starts a Server answering model requests with script, on 127.0.0.1 at a free
// port, and stops it in t's cleanup. Setting STOPGATE_FAKEAPI_LOG=1 logs every request.
func Start(t testing.TB, script Script) *Server {
	t.Helper()
	s := &Server{t: t, script: script, log: os.Getenv("STOPGATE_FAKEAPI_LOG") == "1"}
	s.http = httptest.NewServer(http.HandlerFunc(s.serve)) // httptest binds 127.0.0.1:0
	t.Cleanup(s.http.Close)
	return s
}

// URL is the base URL for ANTHROPIC_BASE_URL, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.http.URL }

// Requests returns the model requests received so far (scenario and side ones), in
// arrival order.
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
	path := strings.TrimSuffix(req.URL.Path, "/")
	switch {
	case req.Method == http.MethodPost && path == "/v1/messages":
		s.messages(w, req.URL.RequestURI(), body)
		return
	case req.Method == http.MethodPost && path == "/v1/messages/count_tokens":
		s.other(req)
		writeJSON(w, http.StatusOK, map[string]any{"input_tokens": 1})
		return
	case req.Method == http.MethodGet && path == "/v1/models":
		// Not seen from 2.1.328 with nonessential traffic off; answered in case.
		s.other(req)
		writeJSON(w, http.StatusOK, map[string]any{"data": []any{}, "has_more": false})
		return
	}
	s.other(req)
	if s.log {
		s.t.Logf("fakeapi: unknown request %s %s %.200s", req.Method, req.URL.RequestURI(), body)
	}
	writeJSON(w, http.StatusNotFound, map[string]any{
		"type":  "error",
		"error": map[string]any{"type": "not_found_error", "message": "fakeapi: not served"},
	})
}

func (s *Server) other(req *http.Request) {
	s.mu.Lock()
	s.others = append(s.others, req.Method+" "+req.URL.RequestURI())
	s.mu.Unlock()
}

func (s *Server) messages(w http.ResponseWriter, path string, body []byte) {
	r, err := decodeRequest(path, body)
	if err != nil {
		s.t.Errorf("fakeapi: %v", err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.Side = isSide(r)
	var reply []Block
	ok := true
	if r.Side {
		reply = sideReply()
	} else {
		reply, ok = s.script.answer(r)
	}
	s.mu.Lock()
	s.requests = append(s.requests, r)
	s.next++
	id := fmt.Sprintf("msg_fake_%03d", s.next)
	// Copy the reply: Turns may share their blocks between requests.
	reply = append([]Block(nil), reply...)
	for i := range reply {
		if reply[i].Type == "tool_use" && reply[i].ID == "" {
			reply[i].ID = fmt.Sprintf("toolu_fake_%03d_%d", s.next, i)
		}
	}
	s.mu.Unlock()
	if !ok {
		s.t.Errorf("fakeapi: no turn answers request %s (turn %d, last message %.300q)", id, r.Assistants(), r.Last().String())
		reply = []Block{Text("fakeapi: no turn answers this request")}
	}
	if s.log {
		s.t.Logf("fakeapi: %s model=%s side=%v turn=%d tools=%d last=%.200q -> %s", id, r.Model, r.Side, r.Assistants(), len(r.Tools), r.Last().String(), summary(reply))
	}
	if !r.Stream {
		writeJSON(w, http.StatusOK, message(id, r.Model, reply))
		return
	}
	if err := writeStream(w, id, r.Model, reply); err != nil {
		s.t.Errorf("fakeapi: stream %s: %v", id, err)
	}
}

func summary(reply []Block) string {
	var parts []string
	for _, b := range reply {
		if b.Type == "tool_use" {
			parts = append(parts, b.Name+"(…)")
		} else {
			parts = append(parts, fmt.Sprintf("%.40q", b.Text))
		}
	}
	return strings.Join(parts, " ")
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}
