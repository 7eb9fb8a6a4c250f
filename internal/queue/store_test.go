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
	os.WriteFile(filepath.Join(dir, TempPrefix+"123"), []byte("{"), 0o644)
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
