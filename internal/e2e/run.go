package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// A Result is what one run of the client did.
type Result struct {
	t testing.TB

	// Stdout is the client's stream-json output; Lines holds its lines, decoded.
	Stdout string
	Lines  []map[string]any
	// Final is the closing "result" line.
	Final Final
	// Debug is the text of the client's --debug-file.
	Debug string
	// Stderr is the client's standard error.
	Stderr string
	// Requests are the model requests the fake API received during the run, in
	// arrival order.
	Requests []*fakellm.Request
	// SessionID is the main session's id.
	SessionID string
	// Transcript is the path of the main session's JSONL transcript, or "".
	Transcript string
	// Wall is how long the client ran.
	Wall time.Duration
	// Load is the machine's 1-minute load average around the run: the higher of the
	// values before and after.
	Load float64
	// Inputs are the hook inputs the client sent the wrapped stopgate commands, oldest
	// first (see Wrapper).
	Inputs []Captured

	dir, home string          // the project's, for Scrub
	wrapped   map[string]bool // the project's wrapped commands
}

// Final is the stream-json "result" line, in part.
type Final struct {
	Subtype        string `json:"subtype"`
	IsError        bool   `json:"is_error"`
	Result         string `json:"result"`
	StopReason     string `json:"stop_reason"`
	TerminalReason string `json:"terminal_reason"`
	NumTurns       int    `json:"num_turns"`
	DurationMS     int    `json:"duration_ms"`
}

// Run writes the project's settings, runs `claude -p prompt` in it against api and
// returns what happened. It fails t, with the tail of the debug log, if the client
// cannot start, outlives p.Timeout, exits non-zero or prints no result line.
func (p *Project) Run(api *fakellm.Server, prompt string) *Result {
	p.t.Helper()
	return p.run(api, prompt)
}

// Resume is Run in an earlier session of the project (claude --resume SESSION): the
// prompt continues that conversation, as a person typing it next would.
func (p *Project) Resume(api *fakellm.Server, session, prompt string) *Result {
	p.t.Helper()
	return p.run(api, prompt, "--resume", session)
}

func (p *Project) run(api *fakellm.Server, prompt string, extra ...string) *Result {
	p.t.Helper()
	claude := Claude(p.t)
	p.writeSettings()
	debug := filepath.Join(p.t.TempDir(), "debug.log")
	timeout := p.Timeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tools := p.AllowedTools
	if tools == "" {
		tools = "Read Write Bash"
	}
	args := append([]string{"-p", prompt,
		"--output-format", "stream-json", "--verbose",
		"--allowedTools", tools,
		"--debug-file", debug}, extra...)
	cmd := exec.CommandContext(ctx, claude, args...)
	cmd.Dir = p.Dir
	cmd.Env = p.env(api.URL())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	seen := len(api.Requests()) // an earlier run's, when the server is shared
	load := loadAverage()
	start := time.Now()
	runErr := cmd.Run()
	r := &Result{t: p.t, Wall: time.Since(start), Stdout: stdout.String(), Stderr: stderr.String(), Requests: api.Requests()[seen:],
		Load: max(load, loadAverage()), dir: p.Dir, home: p.Home, wrapped: p.wrapped}
	var cerr error
	if r.Inputs, cerr = p.takeCaptured(); cerr != nil {
		p.t.Fatalf("e2e: captured hook inputs: %v", cerr)
	}
	if data, rerr := os.ReadFile(debug); rerr == nil {
		r.Debug = string(data)
	}
	p.t.Logf("claude -p %.60q: %v", prompt, r.Wall.Round(time.Millisecond))
	if others := api.Others(); len(others) > 0 {
		p.t.Logf("the fake API was also asked (a new client version?): %v", others)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		r.Fatalf("claude did not finish within %v", timeout)
	}
	if runErr != nil {
		r.Fatalf("claude: %v\nstderr: %s", runErr, r.Stderr)
	}
	if err := r.parse(stdout.Bytes()); err != nil {
		r.Fatalf("stream-json: %v", err)
	}
	r.Transcript = transcript(p.Home, r.SessionID)
	return r
}

// env is the client's environment: the test's own, less anything that could reach a
// real account or another Claude Code session, plus a fresh HOME and the fake API.
func (p *Project) env(baseURL string) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "CLAUDE") || strings.HasPrefix(name, "ANTHROPIC") ||
			name == "HOME" || strings.HasPrefix(name, "XDG_") {
			continue
		}
		env = append(env, kv)
	}
	env = append(env,
		"HOME="+p.Home,
		"ANTHROPIC_BASE_URL="+baseURL,
		"ANTHROPIC_API_KEY=sk-ant-fake-e2e",
		"DISABLE_TELEMETRY=1",
		"DISABLE_AUTOUPDATER=1",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
	)
	return append(env, p.Env...)
}

// parse decodes the stream-json lines and finds the session id and the result line.
func (r *Result) parse(stdout []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(stdout))
	sc.Buffer(nil, 64<<20)
	found := false
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Errorf("line %d: %w", len(r.Lines)+1, err)
		}
		r.Lines = append(r.Lines, m)
		if id, ok := m["session_id"].(string); ok && r.SessionID == "" {
			r.SessionID = id
		}
		if m["type"] == "result" {
			if err := json.Unmarshal(line, &r.Final); err != nil {
				return fmt.Errorf("result line: %w", err)
			}
			found = true
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if !found {
		return errors.New("no result line")
	}
	return nil
}

// transcript finds the session's JSONL under home; the client names the project
// directory after the working directory.
func transcript(home, session string) string {
	if session == "" {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", session+".jsonl"))
	if len(matches) == 0 {
		return ""
	}
	return matches[0]
}

// Told reports whether some scenario request (not a side request) showed the model s,
// anywhere in its conversation.
func (r *Result) Told(s string) bool {
	for _, req := range r.Requests {
		if !req.Side && req.Has(s) {
			return true
		}
	}
	return false
}

// Fatalf fails the test with the message and the tail of the client's debug log.
func (r *Result) Fatalf(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("%s\n%s", fmt.Sprintf(format, args...), r.tail())
}

// Errorf marks the test failed with the message and the tail of the client's debug log.
func (r *Result) Errorf(format string, args ...any) {
	r.t.Helper()
	r.t.Errorf("%s\n%s", fmt.Sprintf(format, args...), r.tail())
}

// tailLines is how much of the debug log a failure shows.
const tailLines = 40

// noise marks debug-log lines a failure's tail leaves out: the client's own
// bookkeeping, which would push the hook runs out of view.
var noise = []string{
	"hooks module ", "[3P telemetry]", "Fast mode unavailable", "CA certs:",
	"temp file", "Temp file", "Renaming ", "written atomically", "file permissions",
}

func (r *Result) tail() string {
	var lines []string
	for _, line := range strings.Split(strings.TrimRight(r.Debug, "\n"), "\n") {
		if !containsAny(line, noise) {
			lines = append(lines, line)
		}
	}
	if len(lines) > tailLines {
		lines = lines[len(lines)-tailLines:]
	}
	return "--- debug log tail ---\n" + strings.Join(lines, "\n")
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
