package config

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestDigestNamedPipe: a named pipe the agent leaves under a fixture's
// name is no file to hash, and never holds the hook: an open of a pipe
// with no writer would wait for one for ever.
func TestDigestNamedPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fixture")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	done := make(chan bool, 1)
	go func() {
		_, ok := digest(p, 1<<20)
		done <- ok
	}()
	select {
	case ok := <-done:
		if ok {
			t.Error("a named pipe was hashed as a file")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("digest of a named pipe is still waiting after 10 s")
	}
}
