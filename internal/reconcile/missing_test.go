package reconcile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestUsesStopgatePipe plants a named pipe at Claude Code's hook file with
// the state dir gone: the question must answer at once, and answer yes
// (a planted pipe is a sign of the project, never a reason to pass).
func TestUsesStopgatePipe(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(root, ".claude", "settings.json"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	transcript := filepath.Join(root, "t.jsonl")
	if err := os.WriteFile(transcript, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan bool, 1)
	go func() { done <- usesStopgate(root, filepath.Join(root, ".stopgate"), transcript, 0) }()
	select {
	case got := <-done:
		if !got {
			t.Error("usesStopgate with a pipe at .claude/settings.json = false, want true")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("usesStopgate held on a named pipe at .claude/settings.json")
	}
}
