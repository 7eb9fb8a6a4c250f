package stop

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/queue"
)

// TestPanicHalts is a real panic inside the judging of a stop with a
// prompt armed (a nil hook input dereferenced): it is recovered, and the
// stop halts naming it, rather than the process dying with exit 2.
func TestPanicHalts(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "mappings.toml"), []byte("[[mapping]]\nprompt = \"p\"\nvalidators = [\"v\"]\n[validators.v]\nrun = \"false\"\n"), 0o644)
	if _, err := queue.Open(filepath.Join(root, "tmp/validation")).Enqueue(queue.Entry{Session: "s1", Prompt: "p", Trigger: queue.TriggerRead}, nil); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	ans := hook.AnswerTo(&stdout, nil)
	s := &judging{env: &cli.Env{Stdout: &stdout, Stderr: &stderr, Dir: root}, ans: &ans, root: root, scope: queue.Scope{Session: "s1"}}
	v, err := s.judge() // s.in is nil: reconciliation dereferences it
	if err == nil {
		t.Fatalf("judge = %+v, want the recovered panic", v)
	}
	if err := s.answer(v, err); err != nil {
		t.Fatalf("answer = %v, want a halt on stdout", err)
	}
	if out := stdout.String(); !strings.Contains(out, `"continue":false`) || !strings.Contains(out, "internal error (a bug in stopgate)") {
		t.Errorf("stdout = %s", out)
	}
	if !strings.Contains(stderr.String(), "goroutine") {
		t.Errorf("stderr has no stack trace: %s", stderr.String())
	}
}

// TestErrorWithNothingArmedExits1: an error after the gate knows nothing
// is armed is the client's non-blocking error, not a halt.
func TestErrorWithNothingArmedExits1(t *testing.T) {
	var stdout bytes.Buffer
	ans := hook.AnswerTo(&stdout, nil)
	s := &judging{env: &cli.Env{Stdout: &stdout}, ans: &ans, clear: true}
	if err := s.answer(nil, os.ErrPermission); err == nil || stdout.Len() > 0 {
		t.Errorf("answer = %v, stdout %q; want the error and no output", err, stdout.String())
	}
}

// panicky is hook input whose reading is a bug: it panics.
type panicky struct{}

func (panicky) Read([]byte) (int, error) { panic("read of a broken input") }

// TestPanicOutsideJudgeHalts: a panic before the gate knows what is armed
// (here, while the input is read) halts too: it cannot know that nothing
// is armed.
func TestPanicOutsideJudgeHalts(t *testing.T) {
	var stdout, stderr bytes.Buffer
	env := &cli.Env{Stdin: panicky{}, Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }, Dir: t.TempDir()}
	if err := Hook(env, "", client.Options{Getenv: env.Getenv}, 0); err != nil {
		t.Fatalf("Hook = %v, want a halt on stdout", err)
	}
	if out := stdout.String(); !strings.Contains(out, `"continue":false`) || !strings.Contains(out, "read of a broken input") {
		t.Errorf("stdout = %s", out)
	}
	if !strings.Contains(stderr.String(), "goroutine") {
		t.Errorf("stderr has no stack trace: %s", stderr.String())
	}
}
