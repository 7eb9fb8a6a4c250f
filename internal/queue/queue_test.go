package queue

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestEnqueueSnapshotRemove(t *testing.T) {
	q := Open(t.TempDir())
	main := Scope{Session: "s1"}
	agent := Scope{Session: "s1", Agent: "a1"}
	mustEnqueue := func(e Entry) bool {
		t.Helper()
		created, err := q.Enqueue(e, nil)
		if err != nil {
			t.Fatal(err)
		}
		return created
	}
	if !mustEnqueue(Entry{Prompt: "git/worktrees/create", Session: "s1", Trigger: TriggerRead}) {
		t.Error("first enqueue not reported as created")
	}
	if mustEnqueue(Entry{Prompt: "git/worktrees/create", Session: "s1", Trigger: TriggerCommand}) {
		t.Error("second enqueue of the same key reported as created")
	}
	mustEnqueue(Entry{Prompt: "joke", Session: "s1", AgentID: "a1", AgentType: "general-purpose", Trigger: TriggerRead})

	es, bad, err := q.Snapshot(main)
	if err != nil || len(bad) != 0 || len(es) != 1 {
		t.Fatalf("Snapshot(main) = %v, %v, %v", es, bad, err)
	}
	if e := es[0]; e.Prompt != "git/worktrees/create" || e.Arms != 2 || e.Trigger != TriggerCommand || e.Created.After(e.Updated) {
		t.Errorf("entry = %+v", e)
	}
	if es, _, _ := q.Snapshot(agent); len(es) != 1 || es[0].AgentType != "general-purpose" {
		t.Errorf("Snapshot(agent) = %v", es)
	}

	// Re-armed after the snapshot: Remove must keep it.
	mustEnqueue(Entry{Prompt: "git/worktrees/create", Session: "s1", Trigger: TriggerRead})
	if err := q.Remove(main, es); err != nil {
		t.Fatal(err)
	}
	now, _, _ := q.Snapshot(main)
	if len(now) != 1 {
		t.Fatalf("re-armed entry removed: %v", now)
	}
	if err := q.Remove(main, now); err != nil {
		t.Fatal(err)
	}
	if es, _, _ := q.Snapshot(main); len(es) != 0 {
		t.Errorf("after Remove: %v", es)
	}
	if _, err := os.Stat(q.scopeDir(main)); !os.IsNotExist(err) {
		t.Errorf("empty scope dir not pruned: %v", err)
	}
}

func TestBlocks(t *testing.T) {
	q := Open(t.TempDir())
	s := Scope{Session: "s"}
	if n, _, err := q.Blocks(s); n != 0 || err != nil {
		t.Fatal("fresh scope has blocks")
	}
	for i, n := range []int{1, 2, 0} {
		stop := fmt.Sprint("stop-", i)
		if err := q.SetBlocks(s, n, stop); err != nil {
			t.Fatal(err)
		}
		got, at, err := q.Blocks(s)
		if got != n || err != nil {
			t.Errorf("Blocks = %d, want %d", got, n)
		}
		if want := map[bool]string{true: stop}[n > 0]; at != want {
			t.Errorf("Blocks' stop = %q, want %q", at, want)
		}
	}
}

func TestSegmentIsOnePathElement(t *testing.T) {
	for _, s := range []string{"..", ".", "a/b", "../../etc", ".tmp-x", "a b", "ü", "%2F"} {
		seg := Segment(s)
		if seg == "." || seg == ".." || filepath.Base(seg) != seg || seg[0] == '.' && seg != "" {
			t.Errorf("Segment(%q) = %q", s, seg)
		}
		if Unsegment(seg) != s {
			t.Errorf("Unsegment(Segment(%q)) = %q", s, Unsegment(seg))
		}
	}
}

func TestStrayTempSwept(t *testing.T) {
	q := Open(t.TempDir())
	s := Scope{Session: "s"}
	q.Enqueue(Entry{Prompt: "p", Session: "s"}, nil)
	stray := filepath.Join(q.scopeDir(s), TempPrefix+"123")
	os.WriteFile(stray, []byte(`{"id":`), 0o644)
	q.Enqueue(Entry{Prompt: "p", Session: "s"}, nil)
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Errorf("stray temp file not swept by the next writer")
	}
}
