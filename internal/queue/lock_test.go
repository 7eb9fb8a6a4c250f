package queue

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// holdLock starts a real process that holds path's lock until the test ends.
func holdLock(t *testing.T, path string, shared bool) *exec.Cmd {
	t.Helper()
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) not installed")
	}
	mode := "-x"
	if shared {
		mode = "-s"
	}
	ready := filepath.Join(t.TempDir(), "ready")
	cmd := exec.Command("flock", mode, path, "sh", "-c", "touch "+ready+"; exec sleep 60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(ready); err == nil {
			return cmd
		}
		if time.Now().After(deadline) {
			t.Fatal("the lock holder never became ready")
		}
	}
}

func TestLockHeldByAnotherProcess(t *testing.T) {
	t.Setenv(WaitEnv, "200ms")
	for _, shared := range []bool{false, true} {
		dir := t.TempDir()
		path := filepath.Join(dir, LockName)
		holder := holdLock(t, path, shared)
		ran := false
		start := time.Now()
		err := Locked(path, func() error { ran = true; return nil })
		var held *HeldError
		if !errors.As(err, &held) {
			t.Fatalf("shared=%v: Do = %v, want a HeldError", shared, err)
		}
		if ran {
			t.Errorf("shared=%v: f ran without the lock", shared)
		}
		if waited := time.Since(start); waited > 5*time.Second {
			t.Errorf("shared=%v: waited %v, past the deadline", shared, waited)
		}
		if len(held.Holders) == 0 || held.Holders[0].PID != holder.Process.Pid {
			t.Errorf("shared=%v: holders %v, want pid %d", shared, held.Holders, holder.Process.Pid)
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "flock") {
			t.Errorf("shared=%v: error %q does not name the lock and its holder", shared, err)
		}
	}
}

func TestLockFreeRunsOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", LockName)
	n := 0
	if err := Locked(path, func() error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("Do = %v, ran %d times", err, n)
	}
	if info, err := os.Stat(path); err != nil || !info.Mode().IsRegular() {
		t.Fatalf("lock file: %v %v", info, err)
	}
}

func TestLockNotARegularFile(t *testing.T) {
	t.Setenv(WaitEnv, "200ms")
	for name, create := range map[string]func(string) error{
		"directory": func(p string) error { return os.Mkdir(p, 0o755) },
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o644) },
		"symlink":   func(p string) error { return os.Symlink("/etc/passwd", p) },
	} {
		path := filepath.Join(t.TempDir(), LockName)
		if err := create(path); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- Locked(path, func() error { return nil }) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") && name != "symlink" {
				t.Errorf("%s: Do = %v, want an error saying it is not a regular file", name, err)
			}
			if err == nil {
				t.Errorf("%s: Do succeeded", name)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Do hung", name)
		}
	}
}
