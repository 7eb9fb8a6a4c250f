package clients

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/e2e"
	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
	"github.com/stopgate/stopgate/internal/example"
)

// openCode is a running `opencode serve` in p, its model the Chat Completions fake.
type openCode struct {
	t    *testing.T
	url  string
	logs *serveLog
}

// serveLog is opencode serve's output, read while the server writes it.
type serveLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *serveLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(b)
}

func (l *serveLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startOpenCode starts `opencode serve` in p on a free loopback port and waits until
// it answers; it is stopped when the test ends.
func startOpenCode(t *testing.T, p *Project, srv *Server) *openCode {
	t.Helper()
	return startOpenCodeWith(t, p, srv, "")
}

// startOpenCodeWith is startOpenCode with more members in opencode.json
// (",\n  \"permission\": …"), as gate init wrote them.
func startOpenCodeWith(t *testing.T, p *Project, srv *Server, more string) *openCode {
	t.Helper()
	bin := clientBin(t, "opencode/node_modules/opencode-linux-x64/bin/opencode")
	p.WriteFile("opencode.json", `{
  "$schema": "https://opencode.ai/config.json",
  "autoupdate": false,
  "share": "disabled",
  "model": "fake/fake-model",
  "provider": {
    "fake": {
      "npm": "@ai-sdk/openai-compatible",
      "name": "fake",
      "options": {"baseURL": "`+srv.URL()+`/v1", "apiKey": "dummy"},
      "models": {"fake-model": {"name": "fake-model"}}
    }
  }`+more+`
}
`)
	// OpenCode installs @opencode-ai/plugin into .opencode/ from npm before it loads
	// the project's plugins, unless it is there: scripts/install-clients put it aside.
	deps := filepath.Join(e2e.Root(t), "tmp", "e2e", "opencode", "plugin-deps")
	for _, f := range []string{"package.json", "package-lock.json"} {
		if err := example.CopyTree(filepath.Join(deps, f), p.Path(".opencode/"+f)); err != nil {
			t.Fatalf("opencode's plugin dependencies (scripts/install-clients opencode): %v", err)
		}
	}
	if err := os.Symlink(filepath.Join(deps, "node_modules"), p.Path(".opencode/node_modules")); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "serve", "--hostname", "127.0.0.1", "--port", fmt.Sprint(port), "--print-logs", "--log-level", "INFO")
	cmd.Dir = p.Dir
	cmd.Env = []string{"HOME=" + p.Home, "PATH=" + os.Getenv("PATH"), "XDG_CONFIG_HOME=" + filepath.Join(p.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(p.Home, ".local/share"), "XDG_CACHE_HOME=" + filepath.Join(p.Home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(p.Home, ".local/state"), "OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1",
		// No npm installs of default plugins or language servers, no Claude Code config.
		"OPENCODE_DISABLE_DEFAULT_PLUGINS=1", "OPENCODE_DISABLE_LSP_DOWNLOAD=1", "OPENCODE_DISABLE_CLAUDE_CODE=1"}
	oc := &openCode{t: t, url: fmt.Sprintf("http://127.0.0.1:%d", port), logs: &serveLog{}}
	cmd.Stdout, cmd.Stderr = oc.logs, oc.logs
	// The server's children may hold its output open: never wait on them for long.
	cmd.WaitDelay = 5 * time.Second
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		cmd.Wait()
		if t.Failed() {
			t.Logf("opencode serve's log, last:\n%s", tail(oc.logs.String(), 3000))
		}
	})
	// Its first start installs its plugin package and warms its caches: 21-37 s
	// on a quiet 2-core machine, past 90 s on a loaded one. A hang bound only.
	const serveLimit = 3 * time.Minute
	start := time.Now()
	deadline := start.Add(serveLimit)
	for {
		resp, err := (&http.Client{Timeout: 2 * time.Second}).Get(oc.url + "/session")
		if err == nil {
			resp.Body.Close()
			t.Logf("opencode serve answered after %.1fs", time.Since(start).Seconds())
			return oc
		}
		if time.Now().After(deadline) {
			t.Fatalf("opencode serve did not answer in %s: %v\n%s", serveLimit, err, tail(oc.logs.String(), 3000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// call sends a JSON request to the server and decodes the answer into out.
func (oc *openCode) call(method, path string, body, out any) {
	oc.t.Helper()
	data, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, oc.url+path, bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: runLimit}).Do(req)
	if err != nil {
		oc.t.Fatalf("%s %s: %v\n%s", method, path, err, tail(oc.logs.String(), 3000))
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		oc.t.Fatalf("%s %s: %s: %s\n%s", method, path, resp.Status, raw, tail(oc.logs.String(), 3000))
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			oc.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
		}
	}
}

// prompt starts a session and sends it text, as a user would.
func (oc *openCode) prompt(text string) {
	oc.t.Helper()
	var session struct {
		ID string `json:"id"`
	}
	oc.call("POST", "/session", map[string]any{}, &session)
	oc.call("POST", "/session/"+session.ID+"/message", map[string]any{
		"model": map[string]any{"providerID": "fake", "modelID": "fake-model"},
		"parts": []any{map[string]any{"type": "text", "text": text}},
	}, nil)
}

// waitFor polls cond until it holds, or fails after runLimit.
func (oc *openCode) waitFor(what string, cond func() bool) {
	oc.t.Helper()
	deadline := time.Now().Add(runLimit)
	for !cond() {
		if time.Now().After(deadline) {
			oc.t.Fatalf("waited %s for %s\n%s", runLimit, what, tail(oc.logs.String(), 4000))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// OpenCode, through the plugin gate init writes, under `opencode serve`: a read of a
// mapped prompt arms it; at session.idle the gate blocks and the plugin sends the fix
// text back as the next prompt; a write to mappings.toml is refused by the guard; the
// agent writes the joke; the next idle passes.
func TestOpenCodeBlockFixPass(t *testing.T) {
	p := NewProject(t, "opencode")
	srv := Start(t, Chat, Script{
		When(func(r *Request) bool { return r.Has("Generate a title") || r.Has("title for") }, Text("Joke session")),
		When(LastHas(denied), Tool("write", map[string]any{"filePath": p.Path("output/joke.txt"), "content": joke + "\n"})),
		When(LastHas(blocked), Tool("write", map[string]any{"filePath": p.Path("mappings.toml"), "content": "# nothing to check\n"})),
		When(ResultOf("write"), Text("Fixed: the joke is in output/joke.txt.")),
		When(ResultOf("read"), Text("Done.")),
		When(AtTurn(0), Tool("read", map[string]any{"filePath": p.Path("src/prompts/joke.md")})),
	})
	oc := startOpenCode(t, p, srv)
	start := time.Now()
	oc.prompt("Follow src/prompts/joke.md")
	oc.waitFor("the joke and an empty queue", func() bool {
		return p.ReadFile("output/joke.txt") == joke+"\n" && len(p.Pending()) == 0
	})
	t.Logf("opencode: %.1fs from the prompt to the passing stop, %d model requests", time.Since(start).Seconds(), len(srv.Requests()))
	// The plugin hands detect's announcement to the model with the read's result.
	if !slices.ContainsFunc(srv.Requests(), func(r *Request) bool { return r.Has("will be checked") }) {
		t.Error("no model request carries detect's announcement")
	}
	checkBlockFixPass(t, p, "opencode", srv.Requests(), oc.inputs(p))
}

// inputs are the plugin's events to the stopgate commands, as captured.
func (oc *openCode) inputs(p *Project) []Captured {
	if testing.Verbose() {
		l := oc.logs.String()
		oc.t.Logf("opencode serve's log:\n%s\n…\n%s", l[:min(len(l), 2500)], tail(l, 1500))
	}
	return p.takeCaptured()
}

// OpenCode has no block cap and no stop_hook_active: the gate's max_blocks ends a
// failing loop, and the plugin sends nothing back after the halt: it prints the
// halt's reason where OpenCode prints its plugins' errors (the terminal of
// opencode run, the log of opencode serve).
func TestOpenCodeLoopEndsAtMaxBlocks(t *testing.T) {
	p := NewProject(t, "opencode")
	srv := Start(t, Chat, Script{
		When(func(r *Request) bool { return r.Has("Generate a title") || r.Has("title for") }, Text("Joke session")),
		When(LastHas(blocked), Text("Done, really.")),
		When(ResultOf("read"), Text("Done.")),
		When(AtTurn(0), Tool("read", map[string]any{"filePath": p.Path("src/prompts/joke.md")})),
	})
	oc := startOpenCode(t, p, srv)
	oc.prompt("Follow src/prompts/joke.md")
	blocks := func() int {
		n := 0
		for _, q := range srv.Requests() {
			if strings.Contains(q.Latest(), blocked) {
				n++
			}
		}
		return n
	}
	oc.waitFor("the gate at four idles", func() bool { return p.captured("gate") >= 4 })
	time.Sleep(2 * time.Second) // after the halt nothing more may be sent
	if n := blocks(); n != 3 {
		t.Errorf("the model was sent %d blocks, want 3: then the halt", n)
	}
	inputs := oc.inputs(p)
	stops := 0
	for _, in := range inputs {
		if in.Program == "gate" {
			stops++
		}
	}
	checkInputs(t, "opencode", inputs)
	if stops != 4 {
		t.Errorf("the gate ran at %d idles, want 4: three blocks, then the halt", stops)
	}
	if !strings.Contains(oc.logs.String(), "stopgate halted the session: 2 checks failed after 3 blocked stops.") {
		t.Errorf("opencode did not print the halt's reason\n%s", tail(oc.logs.String(), 3000))
	}
}
