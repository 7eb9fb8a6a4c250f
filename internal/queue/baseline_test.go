package queue

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// recorderEnv, when set to a state dir, makes this test binary a detect
// whose baseline takes as long as its test says: it writes half of it,
// says "recording", and writes the rest when a line comes on stdin.
const recorderEnv = "STOPGATE_QUEUE_SLOW_RECORDER"

const wholeRecord = "half of it, and the rest\n"

// TestSlowBaselineHoldsNoLock: while one process takes a new entry's
// baseline, another enqueues into the same folder (the lock is free: it
// waits at most the lock's wait, seconds); the baseline then lands whole,
// beside its entry, unless another process armed the entry meanwhile
// (the first baseline stays). A process killed mid-record leaves no baseline, only a
// file nobody reads, swept once stale.
func TestSlowBaselineHoldsNoLock(t *testing.T) {
	if dir := os.Getenv(recorderEnv); dir != "" {
		slowRecorder(dir)
		return
	}
	dir := t.TempDir()
	q := Open(dir)
	slow := Entry{Session: "s", Prompt: "slow", Trigger: TriggerRead}

	rec := startRecorder(t, dir)
	if _, err := q.Enqueue(Entry{Session: "s", Prompt: "other", Trigger: TriggerRead}, nil); err != nil {
		t.Fatalf("an enqueue during another's baseline: %v", err)
	}
	if _, err := os.Stat(q.BaselinePath(slow)); !os.IsNotExist(err) {
		t.Fatalf("a baseline in place before it was whole: %v", err)
	}
	io.WriteString(rec.stdin, "go\n")
	if line := rec.line(t); line != "created true\n" {
		t.Fatalf("recorder: %q", line)
	}
	rec.cmd.Wait()
	if b, err := os.ReadFile(q.BaselinePath(slow)); string(b) != wholeRecord {
		t.Fatalf("baseline %q, %v", b, err)
	}
	if got := taken(t, q, slow); len(got) != 0 {
		t.Fatalf("left behind: %q", got)
	}

	// Armed by another process meanwhile: that one's baseline stays, this
	// one's is dropped.
	q.Remove(Scope{Session: "s"}, []Entry{mustGet(t, q, slow)})
	rec = startRecorder(t, dir)
	created, err := q.Enqueue(slow, func(path string) error { return os.WriteFile(path, []byte("first\n"), 0o600) })
	if !created || err != nil {
		t.Fatalf("the first arming: %v, %v", created, err)
	}
	io.WriteString(rec.stdin, "go\n")
	if line := rec.line(t); line != "created false\n" {
		t.Fatalf("recorder: %q", line)
	}
	rec.cmd.Wait()
	if b, err := os.ReadFile(q.BaselinePath(slow)); string(b) != "first\n" {
		t.Fatalf("baseline %q, %v", b, err)
	}
	if got := taken(t, q, slow); len(got) != 0 {
		t.Fatalf("left behind: %q", got)
	}

	// Killed mid-record: no entry, no baseline, a half file nobody reads.
	q.Remove(Scope{Session: "s"}, []Entry{mustGet(t, q, slow)})
	rec = startRecorder(t, dir)
	rec.cmd.Process.Kill()
	rec.cmd.Wait()
	half := taken(t, q, slow)
	if len(half) != 1 {
		t.Fatalf("half files: %q", half)
	}
	if _, err := os.Stat(q.BaselinePath(slow)); !os.IsNotExist(err) {
		t.Fatalf("a killed record left a baseline: %v", err)
	}
	// A fresh one is not swept (its writer may be waiting for the lock);
	// a stale one is.
	q.Enqueue(Entry{Session: "s", Prompt: "third", Trigger: TriggerRead}, nil)
	if len(taken(t, q, slow)) != 1 {
		t.Fatal("a fresh taken baseline was swept")
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(half[0], old, old)
	q.Enqueue(Entry{Session: "s", Prompt: "third", Trigger: TriggerRead}, nil)
	if got := taken(t, q, slow); len(got) != 0 {
		t.Fatalf("a stale taken baseline was not swept: %q", got)
	}
}

type recorder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *bufio.Reader
}

// startRecorder starts a slow recorder and returns once it is recording.
func startRecorder(t *testing.T, dir string) *recorder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSlowBaselineHoldsNoLock$")
	cmd.Env = append(os.Environ(), recorderEnv+"="+dir)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	r := &recorder{cmd: cmd, stdin: stdin, out: bufio.NewReader(out)}
	if line := r.line(t); line != "recording\n" {
		t.Fatalf("recorder did not start: %q", line)
	}
	return r
}

// line reads the recorder's next line, failing after 30 s.
func (r *recorder) line(t *testing.T) string {
	t.Helper()
	got := make(chan string, 1)
	go func() {
		l, _ := r.out.ReadString('\n')
		got <- l
	}()
	select {
	case l := <-got:
		return l
	case <-time.After(30 * time.Second):
		t.Fatal("recorder silent for 30 s")
		return ""
	}
}

func slowRecorder(dir string) {
	created, err := Open(dir).Enqueue(Entry{Session: "s", Prompt: "slow", Trigger: TriggerRead}, func(path string) error {
		if err := os.WriteFile(path, []byte(wholeRecord[:9]), 0o600); err != nil {
			return err
		}
		fmt.Println("recording")
		if _, err := bufio.NewReader(os.Stdin).ReadString('\n'); err != nil {
			return err
		}
		return os.WriteFile(path, []byte(wholeRecord), 0o600)
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println("created", created)
	os.Exit(0)
}

// taken lists the baselines taken before the lock in e's folder.
func taken(t *testing.T, q *Queue, e Entry) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(filepath.Dir(q.EntryPath(e)), takenPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustGet(t *testing.T, q *Queue, e Entry) Entry {
	t.Helper()
	entries, _, err := q.Snapshot(e.Scope())
	if err != nil {
		t.Fatal(err)
	}
	for _, got := range entries {
		if got.Prompt == e.Prompt {
			return got
		}
	}
	t.Fatalf("no entry %q among %d", e.Prompt, len(entries))
	return Entry{}
}

// TestDamagedEntryKeepsBaseline: an entry that cannot be read is written
// anew at the next arming, but its baseline stays the first arming's: a
// new one would forgive every line added since.
func TestDamagedEntryKeepsBaseline(t *testing.T) {
	q := Open(t.TempDir())
	e := Entry{Session: "s", Prompt: "p", Trigger: TriggerRead}
	write := func(text string) func(string) error {
		return func(path string) error { return os.WriteFile(path, []byte(text), 0o600) }
	}
	if _, err := q.Enqueue(e, write("first\n")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(q.EntryPath(e), []byte("{damaged"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Enqueue(e, write("second\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(q.BaselinePath(e)); string(b) != "first\n" {
		t.Fatalf("baseline %q, %v; want the first arming's", b, err)
	}
}
