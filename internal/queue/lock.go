package queue

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// LockName is the state dir's lock file. It is permanent: deleting it
// while held would let a second writer in.
const LockName = "lock"

// WaitEnv overrides DefaultWait, as a Go duration ("500ms", "10s").
const WaitEnv = "STOPGATE_LOCK_WAIT"

// DefaultWait is how long a lock acquisition waits: long enough for any
// honest writer (they hold it for file operations only, milliseconds),
// short against the client's hook timeouts (detect's is 10 s).
const DefaultWait = 5 * time.Second

// Wait returns how long lock acquisitions wait: WaitEnv if it is a
// positive duration, else DefaultWait.
func Wait() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(WaitEnv)); err == nil && d > 0 {
		return d
	}
	return DefaultWait
}

// Lock is an exclusive lock on one file, shared by processes.
type Lock struct {
	path string
}

// NewLock returns the lock on path; nothing is created until it is taken.
func NewLock(path string) *Lock { return &Lock{path: path} }

// Do runs f while holding the lock exclusively, creating the lock file
// (and its folder) if needed. It waits at most Wait(); past that it
// returns a *HeldError and f does not run.
func (l *Lock) Do(f func() error) error {
	if err := os.MkdirAll(filepath.Dir(l.path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(l.path), err)
	}
	if info, err := os.Lstat(l.path); err == nil && !info.Mode().IsRegular() {
		return fmt.Errorf("locking %s: %w (%s)", l.path, ErrNotRegular, kind(info.Mode()))
	}
	// O_NONBLOCK: a FIFO planted as the lock after the check above must not
	// hang the open; O_NOFOLLOW: nor may a symlink lead the lock elsewhere.
	fl := flock.New(l.path, flock.SetFlag(os.O_CREATE|os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW))
	if err := acquire(fl, Wait()); err != nil {
		return err
	}
	defer fl.Close()
	if info, err := fl.Stat(); err != nil || !info.Mode().IsRegular() {
		return fmt.Errorf("locking %s: %w", l.path, ErrNotRegular)
	}
	return f()
}

// acquire takes fl, waiting at most wait. The wait is the kernel's own
// (a blocking flock), not a poll: with many writers queued a poller can
// lose every race for seconds. A wait that times out leaves its flock
// call behind; should that call still get the lock, it lets go at once.
func acquire(fl *flock.Flock, wait time.Duration) error {
	got := make(chan error, 1)
	var mu sync.Mutex
	gaveUp := false
	go func() {
		err := fl.Lock()
		mu.Lock()
		defer mu.Unlock()
		if gaveUp {
			fl.Close()
			return
		}
		got <- err
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case err := <-got:
		return lockError(fl.Path(), err)
	case <-timer.C:
	}
	mu.Lock()
	gaveUp = true
	mu.Unlock()
	select {
	case err := <-got: // it came in just as the wait ended
		return lockError(fl.Path(), err)
	default:
		return &HeldError{Path: fl.Path(), Waited: wait, Holders: Holders(fl.Path())}
	}
}

func lockError(path string, err error) error {
	if err != nil {
		return fmt.Errorf("locking %s: %w", path, notRegular(path, err))
	}
	return nil
}

// ErrNotRegular is a lock path that is not a plain file: a directory, a named
// pipe or a symlink planted there.
var ErrNotRegular = errors.New("the lock is not a regular file")

// notRegular says so when err comes from a lock path that is not a file.
func notRegular(path string, err error) error {
	if info, lerr := os.Lstat(path); lerr == nil && !info.Mode().IsRegular() {
		return fmt.Errorf("%w (%s)", ErrNotRegular, kind(info.Mode()))
	}
	return err
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return m.String()
}

// HeldError is a lock that stayed held past the deadline.
type HeldError struct {
	Path    string
	Waited  time.Duration
	Holders []Holder // who holds it, where the system tells; may be empty
}

func (e *HeldError) Error() string {
	who := "another process"
	if len(e.Holders) > 0 {
		var hs []string
		for _, h := range e.Holders {
			hs = append(hs, h.String())
		}
		who = strings.Join(hs, ", ")
	}
	return fmt.Sprintf("the lock %s is held by %s and was not free within %v", e.Path, who, e.Waited)
}

// Holder is a process holding a lock.
type Holder struct {
	PID     int
	Command string // its command line, when known
}

func (h Holder) String() string {
	if h.Command == "" {
		return fmt.Sprintf("pid %d", h.PID)
	}
	return fmt.Sprintf("pid %d (%s)", h.PID, h.Command)
}
