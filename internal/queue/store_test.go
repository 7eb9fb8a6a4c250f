package queue

import (
	"os"
	"path/filepath"
	"testing"
)

func TestHasPendingLooksWithoutMoving(t *testing.T) {
	q := Open(t.TempDir())
	s := Scope{Session: "s1"}
	if q.HasPending(s) {
		t.Fatal("empty queue has pending entries")
	}
	dir := q.scopeDir(s)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	// A temp file of a killed writer is not an entry.
	os.WriteFile(filepath.Join(dir, tempPrefix+"123"), []byte("{"), 0o644)
	if q.HasPending(s) {
		t.Error("a temp file counts as pending")
	}
	// An unreadable entry is pending: the gate must see it and report it,
	// so HasPending leaves it where it is.
	bad := filepath.Join(dir, "joke.json")
	os.WriteFile(bad, []byte("{torn"), 0o644)
	if !q.HasPending(s) {
		t.Error("an unreadable entry does not count as pending")
	}
	if _, err := os.Stat(bad); err != nil {
		t.Errorf("HasPending moved the entry: %v", err)
	}
	if q.HasPending(Scope{Session: "s1", Agent: "a1"}) || q.HasPending(Scope{Session: "s2"}) {
		t.Error("another scope has pending entries")
	}
}

func TestStoreHelpers(t *testing.T) {
	dir := t.TempDir()
	q := Open(dir)
	path := filepath.Join(dir, "x.json")
	err := q.Locked(func() error {
		os.WriteFile(filepath.Join(dir, tempPrefix+"orphan"), nil, 0o644)
		SweepTemps(dir)
		return WriteJSON(path, map[string]int{"n": 1})
	})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]int
	if err := ReadJSON(path, &got); err != nil || got["n"] != 1 {
		t.Errorf("ReadJSON = %v, %v", got, err)
	}
	if m, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*")); len(m) != 0 {
		t.Errorf("temp files left: %v", m)
	}
	for _, s := range []string{"plain", "a/b", ".hidden", "..", "sp ace"} {
		seg := Segment(s)
		if filepath.Base(seg) != seg || seg[0] == '.' || Unsegment(seg) != s {
			t.Errorf("Segment(%q) = %q, Unsegment = %q", s, seg, Unsegment(seg))
		}
	}
}
