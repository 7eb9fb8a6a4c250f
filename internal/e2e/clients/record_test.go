package clients

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// reconciled is the note of a stop judged from the client's record although the
// queue had lost its entry.
const reconciled = "Checked although missing from the queue"

// loseQueue is a Turn that deletes the project's queue (sessions/ in the state dir)
// when m matches, as an agent or a failed detect would lose it, then answers reply.
// It counts the entries it deleted.
type loseQueue struct {
	mu      sync.Mutex
	p       *Project
	deleted int
	// settle is how long the turn waits before it answers: a client that writes
	// its record lazily (Copilot CLI) has then written the read before the stop.
	settle time.Duration
}

func (l *loseQueue) turn(m Match, reply ...Part) Turn {
	return func(r *Request) []Part {
		if !m(r) {
			return nil
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		time.Sleep(l.settle)
		l.deleted += len(l.p.Pending())
		if err := os.RemoveAll(l.p.Path("tmp/validation/sessions")); err != nil {
			l.p.t.Error(err)
		}
		return reply
	}
}

func (l *loseQueue) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.deleted
}

// checkLostRead checks the end of a lost-read scenario: the entry was deleted before
// the stop, the stop was blocked anyway from the client's record (and said so), the
// agent fixed the work, nothing is left pending, and the record fits its schema.
func checkLostRead(t *testing.T, p *Project, client string, lost *loseQueue, r *Result) {
	t.Helper()
	if lost.count() == 0 {
		t.Error("no queue entry was there to delete: the read did not arm")
	}
	var sawBlock bool
	for _, q := range r.Requests {
		sawBlock = sawBlock || strings.Contains(q.Latest(), blocked) && strings.Contains(q.Latest(), reconciled)
	}
	if !sawBlock {
		t.Errorf("no stop was blocked from the record (%q)\nstdout: %s\nstderr: %s", reconciled, r.Stdout, tail(r.Stderr, 3000))
	}
	if got := p.ReadFile("output/joke.txt"); got != joke+"\n" {
		t.Errorf("output/joke.txt = %q", got)
	}
	if q := p.Pending(); len(q) != 0 {
		t.Errorf("entries left: %v", q)
	}
	checkInputs(t, client, r.Inputs)
	checkRecord(t, client, r.Inputs)
}

// checkRecord validates every line of the client's own record of the session (the
// file its stop input names) against testdata/schema/<client>/record.schema.json, the
// fields the dialect's Record reads. With STOPGATE_SAVE_RECORDS=DIR it also saves the
// record there, the project folder written @PROJECT@ and the home @HOME@, as the
// captures in testdata/records were made.
func checkRecord(t *testing.T, client string, inputs []Captured) {
	t.Helper()
	var path string
	for _, in := range inputs {
		if in.Program == "gate" {
			path = in.field("transcript_path") + in.field("transcriptPath")
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("the client's record of the session: %v", err)
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		checkSchema(t, filepath.Join(client, "record.schema.json"), sc.Bytes())
	}
	if dir := os.Getenv("STOPGATE_SAVE_RECORDS"); dir != "" {
		out := filepath.Join(dir, client, t.Name()+".jsonl")
		os.MkdirAll(filepath.Dir(out), 0o755)
		if err := os.WriteFile(out, data, 0o644); err != nil {
			t.Error(err)
		}
	}
}

// Codex: the model reads the prompt with a shell command, which arms it; the queue is
// deleted before the model's next turn; the stop is blocked anyway from the rollout,
// the model writes the joke, the stop passes.
func TestCodexRecordJudgesLostRead(t *testing.T) {
	p := NewProject(t, "codex")
	lost := &loseQueue{p: p}
	srv := Start(t, Responses, Script{
		after(LastHas(blocked), run("mkdir -p output && printf '%s\\n' '"+joke+"' > output/joke.txt")),
		lost.turn(LastHas("Write a short, original programming joke"), Text("Done.")),
		When(LastHas("Process exited with code 0"), Text("Fixed: the joke is in output/joke.txt.")),
		after(AtTurn(0), run("cat src/prompts/joke.md")),
	})
	r := codex(t, p, srv, "Follow src/prompts/joke.md")
	checkLostRead(t, p, "codex", lost, r)
}

// Gemini CLI: read_file arms the prompt; the queue is deleted before the model's next
// turn; AfterAgent is blocked anyway from the session file.
func TestGeminiRecordJudgesLostRead(t *testing.T) {
	p := NewProject(t, "gemini")
	lost := &loseQueue{p: p}
	srv := Start(t, Gemini, Script{
		When(LastHas(blocked), Tool("write_file", map[string]any{"file_path": p.Path("output/joke.txt"), "content": joke + "\n"})),
		When(ResultOf("write_file"), Text("Fixed: the joke is in output/joke.txt.")),
		lost.turn(ResultOf("read_file"), Text("Done.")),
		When(AtTurn(0), Tool("read_file", map[string]any{"file_path": p.Path("src/prompts/joke.md")})),
	})
	r := gemini(t, p, srv, "Follow src/prompts/joke.md")
	checkLostRead(t, p, "gemini", lost, r)
}

// Copilot CLI: a view arms the prompt; the queue is deleted before the model's next
// turn; agentStop is blocked anyway from events.jsonl.
func TestCopilotRecordJudgesLostRead(t *testing.T) {
	p := NewProject(t, "copilot")
	p.WriteFile("output/.keep", "") // Copilot's create makes no parent directory
	// Copilot writes events.jsonl behind the session: a read made just before
	// the stop may not be in it yet when agentStop runs (seen here, 1 run in 4),
	// which docs/reconciliation.md states as a limit. The model's turn takes 2 s.
	lost := &loseQueue{p: p, settle: 2 * time.Second}
	srv := Start(t, Chat, Script{
		When(LastHas(blocked), Tool("create", map[string]any{"path": p.Path("output/joke.txt"), "file_text": joke + "\n"})),
		When(ResultOf("create"), Text("Fixed: the joke is in output/joke.txt.")),
		lost.turn(ResultOf("view"), Text("Done.")),
		When(AtTurn(0), Tool("view", map[string]any{"path": p.Path("src/prompts/joke.md")})),
	})
	r := copilot(t, p, srv, "Follow src/prompts/joke.md")
	checkLostRead(t, p, "copilot", lost, r)
}

// OpenCode: a read arms the prompt; the queue is deleted before the model's next
// turn; at session.idle the plugin hands the gate the session's messages (its record,
// from the SDK), and the gate blocks from them.
func TestOpenCodeRecordJudgesLostRead(t *testing.T) {
	p := NewProject(t, "opencode")
	lost := &loseQueue{p: p}
	srv := Start(t, Chat, Script{
		When(func(r *Request) bool { return r.Has("Generate a title") || r.Has("title for") }, Text("Joke session")),
		When(LastHas(blocked), Tool("write", map[string]any{"filePath": p.Path("output/joke.txt"), "content": joke + "\n"})),
		When(ResultOf("write"), Text("Fixed: the joke is in output/joke.txt.")),
		lost.turn(ResultOf("read"), Text("Done.")),
		When(AtTurn(0), Tool("read", map[string]any{"filePath": p.Path("src/prompts/joke.md")})),
	})
	oc := startOpenCode(t, p, srv)
	oc.prompt("Follow src/prompts/joke.md")
	oc.waitFor("the joke and a passing stop", func() bool {
		return p.ReadFile("output/joke.txt") == joke+"\n" && p.captured("gate") >= 2
	})
	time.Sleep(time.Second) // the gate of the last idle has answered
	r := &Result{Requests: srv.Requests(), Inputs: oc.inputs(p)}
	checkLostRead(t, p, "opencode", lost, r)
}
