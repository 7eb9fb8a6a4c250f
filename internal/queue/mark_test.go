package queue

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMark(t *testing.T) {
	q := Open(t.TempDir())
	main := Scope{Session: "s/1"}
	agent := Scope{Session: "s/1", Agent: "../a"}
	if m := q.Mark(main); !m.Equal(Mark{}) {
		t.Fatalf("no mark yet: %+v", m)
	}
	want := Mark{Transcript: "/t.jsonl", Offset: 42, Passed: map[string]int64{"joke": 50}}
	if err := q.SetMark(main, want); err != nil {
		t.Fatal(err)
	}
	if err := q.SetMark(agent, Mark{Transcript: "/a.jsonl", Offset: 7}); err != nil {
		t.Fatal(err)
	}
	if got := q.Mark(main); !got.Equal(want) || got.Updated.IsZero() {
		t.Errorf("main: %+v, want %+v", got, want)
	}
	if got := q.Mark(agent); got.Offset != 7 || got.Transcript != "/a.jsonl" {
		t.Errorf("agent: %+v", got)
	}
	// Marks stay out of the queue's folders, and their names are escaped.
	for _, rel := range []string{"reconciled/s%2F1/main.json", "reconciled/s%2F1/agent-%2E.%2Fa.json"} {
		if _, err := os.Stat(filepath.Join(q.Dir(), rel)); err != nil {
			t.Errorf("%s: %v", rel, err)
		}
	}
	if entries, bad, err := q.Snapshot(main); len(entries)+len(bad) != 0 || err != nil {
		t.Errorf("the queue sees marks: %v %v %v", entries, bad, err)
	}
	// A zero mark removes it; an unreadable one reads as none.
	if err := q.SetMark(main, Mark{}); err != nil {
		t.Fatal(err)
	}
	if got := q.Mark(main); !got.Equal(Mark{}) {
		t.Errorf("removed: %+v", got)
	}
	os.WriteFile(q.markPath(agent), []byte("{"), 0o644)
	if got := q.Mark(agent); !got.Equal(Mark{}) {
		t.Errorf("corrupt: %+v", got)
	}
}
