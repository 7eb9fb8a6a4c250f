package queue

import (
	"os"
	"path/filepath"
	"testing"
)

func TestList(t *testing.T) {
	q := Open(t.TempDir())
	if scopes, bad, err := q.List(); len(scopes) != 0 || len(bad) != 0 || err != nil {
		t.Fatalf("empty queue: List = %v, %v, %v", scopes, bad, err)
	}
	for _, e := range []Entry{
		{Prompt: "joke", Session: "s2", Trigger: TriggerRead},
		{Prompt: "b", Session: "s1", AgentID: "a/1", Trigger: TriggerRead},
		{Prompt: "z", Session: "s1", Trigger: TriggerCommand},
		{Prompt: "a", Session: "s1", Trigger: TriggerPrompt},
	} {
		if _, err := q.Enqueue(e, nil); err != nil {
			t.Fatal(err)
		}
	}
	// A scope with only a blocked-stop count left is listed too.
	if err := q.SetBlocks(Scope{Session: "s3", Agent: "x"}, 2, ""); err != nil {
		t.Fatal(err)
	}
	// An unreadable entry is set aside and reported.
	bad := filepath.Join(q.Dir(), "sessions", "s2", "main", "torn.json")
	if err := os.WriteFile(bad, []byte(`{"prompt":`), 0o644); err != nil {
		t.Fatal(err)
	}

	scopes, set, err := q.List()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range scopes {
		line := p.Scope.String() + ":"
		for _, e := range p.Entries {
			line += " " + e.Prompt
		}
		if p.Blocks > 0 {
			line += " blocks=" + string(rune('0'+p.Blocks))
		}
		got = append(got, line)
	}
	want := []string{"s1/main: a z", "s1/agent a/1: b", "s2/main: joke", "s3/agent x: blocks=2"}
	if len(got) != len(want) {
		t.Fatalf("List = %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("List[%d] = %q, want %q", i, got[i], want[i])
		}
	}
	if len(set) != 1 {
		t.Fatalf("set aside %v, want the torn entry", set)
	}
	aside, err := q.SetAside()
	if err != nil || len(aside) != 1 || aside[0] != set[0].Path {
		t.Errorf("SetAside = %v, %v; want [%s]", aside, err, set[0].Path)
	}
}
