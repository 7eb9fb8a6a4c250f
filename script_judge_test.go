package stopgate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// fakejudge VAR serves a model API on loopback for the rest of the script
// and sets VAR to its URL, and $VAR_DIR to a folder outside the project
// (whose changes a judge would see). Each request is answered from the
// file answer in that folder as it is then: its text is the model's reply, in
// the Anthropic dialect for a path ending /messages and the OpenAI one
// for /chat/completions; "status 500" answers that status, "hang" never
// answers. A request without the key $FAKEJUDGE_KEY in the dialect's
// header gets 401. Each request's body is written to request.N there
// (N from 1), so a script counts requests and reads what was sent.
func cmdFakeJudge(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: fakejudge VAR")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	work, err := os.MkdirTemp("", "fakejudge-")
	ts.Check(err)
	key := ts.Getenv("FAKEJUDGE_KEY")
	var mu sync.Mutex
	n := 0
	hang := make(chan struct{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		n++
		os.WriteFile(filepath.Join(work, fmt.Sprintf("request.%d", n)), body, 0o644)
		mu.Unlock()
		answer, _ := os.ReadFile(filepath.Join(work, "answer"))
		text := strings.TrimSpace(string(answer))
		openai := strings.HasSuffix(r.URL.Path, "/chat/completions")
		auth := r.Header.Get("x-api-key")
		if openai {
			auth = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		}
		switch {
		case auth != key:
			http.Error(w, `{"error":"bad key"}`, http.StatusUnauthorized)
		case text == "hang":
			select {
			case <-hang:
			case <-r.Context().Done():
			}
		case strings.HasPrefix(text, "status "):
			var code int
			fmt.Sscanf(text, "status %d", &code)
			http.Error(w, `{"error":"canned"}`, code)
		case openai:
			fmt.Fprintf(w, `{"choices":[{"message":{"role":"assistant","content":%s}}],"usage":{"prompt_tokens":1200,"completion_tokens":80}}`, quote(text))
		default:
			fmt.Fprintf(w, `{"content":[{"type":"text","text":%s}],"usage":{"input_tokens":1000,"output_tokens":50}}`, quote(text))
		}
	})}
	go srv.Serve(l)
	ts.Defer(func() {
		close(hang)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
		os.RemoveAll(work)
	})
	ts.Setenv(args[0], "http://"+l.Addr().String())
	ts.Setenv(args[0]+"_DIR", work)
}

// quote is s as a JSON string.
func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
