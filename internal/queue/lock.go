package queue

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"
	"github.com/stopgate/stopgate/internal/atomicfile"
)

// LockName is the state dir's lock file, never deleted: that would let a second writer in.
const LockName = "lock"

// WaitEnv overrides DefaultWait, as a Go duration ("500ms", "10s").
const WaitEnv = "STOPGATE_LOCK_WAIT"

// DefaultWait is how long a lock acquisition waits: long for any honest writer, short against hook timeouts.
const DefaultWait = 5 * time.Second

// Wait returns WaitEnv if it is a positive duration, else DefaultWait.
func Wait() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(WaitEnv)); err == nil && d > 0 {
		return d
	}
	return DefaultWait
}

// Locked runs f holding the exclusive lock on the file at path, shared by processes, creating the file if needed;
// past Wait() it returns a *HeldError.
func Locked(path string, f func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	if err := notRegular(path); err != nil {
		return err
	}
	// O_NONBLOCK: a FIFO planted after the check must not hang the open; O_NOFOLLOW: nor may a symlink lead the lock elsewhere.
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW))
	if err := acquire(fl, Wait()); err != nil {
		return err
	}
	defer fl.Close()
	if info, err := fl.Stat(); err != nil || !info.Mode().IsRegular() {
		return fmt.Errorf("locking %s: %w", path, ErrNotRegular)
	}
	return f()
}

// acquire takes fl within wait in the kernel's blocking flock (a poller loses races); one got too late lets go.
func acquire(fl *flock.Flock, wait time.Duration) error {
	got, gaveUp := make(chan error), make(chan struct{})
	go func() {
		err := fl.Lock()
		select {
		case got <- err:
		case <-gaveUp:
			fl.Close()
		}
	}()
	select {
	case err := <-got:
		if err == nil {
			return nil
		}
		if nr := notRegular(fl.Path()); nr != nil {
			return nr
		}
		return fmt.Errorf("locking %s: %w", fl.Path(), err)
	case <-time.After(wait):
		close(gaveUp)
		return &HeldError{Path: fl.Path(), Waited: wait, Holders: Holders(fl.Path())}
	}
}

// ErrNotRegular is a lock path that is not a plain file (a planted FIFO, symlink...).
var ErrNotRegular = errors.New("the lock is not a regular file")

// notRegular is ErrNotRegular naming what lies at path; nil for a file or nothing.
func notRegular(path string) error {
	if info, err := os.Lstat(path); err == nil && !info.Mode().IsRegular() {
		return fmt.Errorf("locking %s: %w (%s)", path, ErrNotRegular, cmp.Or(kinds[info.Mode().Type()], info.Mode().String()))
	}
	return nil
}

// kinds name the file types, for the error.
var kinds = map[fs.FileMode]string{fs.ModeDir: "a directory", fs.ModeSymlink: "a symlink", fs.ModeNamedPipe: "a named pipe",
	fs.ModeSocket: "a socket", fs.ModeDevice: "a device", fs.ModeDevice | fs.ModeCharDevice: "a device"}

// HeldError is a lock that stayed held past the deadline.
type HeldError struct {
	Path    string
	Waited  time.Duration
	Holders []Holder // who holds it, where the system tells; may be empty
}

func (e *HeldError) Error() string {
	var hs []string
	for _, h := range e.Holders {
		hs = append(hs, h.String())
	}
	return fmt.Sprintf("the lock %s is held by %s and was not free within %v", e.Path, cmp.Or(strings.Join(hs, ", "), "another process"), e.Waited)
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

// TempPrefix starts the name of every file being written in the state dir.
const TempPrefix = ".tmp-"

// WriteJSON writes v to path crash-safe (atomicfile), under the lock; the folder must exist.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(path, append(data, '\n'))
}

// WriteFile is WriteJSON for bytes.
func WriteFile(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Options{TempPrefix: TempPrefix})
}

// ReadJSON reads a file written by WriteJSON; no lock needed.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Leftover names files a killed writer leaves: named Prefix…, older than Age (0: any).
type Leftover struct {
	Prefix string
	Age    time.Duration
}

// Temps are WriteFile's temp files: written under the lock, any a lock holder sees is an orphan.
var Temps = Leftover{Prefix: TempPrefix}

// Sweep removes from dir the leftovers of each kind, in one read of it.
func Sweep(dir string, kinds ...Leftover) {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		for _, k := range kinds {
			if !strings.HasPrefix(de.Name(), k.Prefix) {
				continue
			}
			if info, err := de.Info(); k.Age == 0 || err == nil && time.Since(info.ModTime()) > k.Age {
				os.Remove(filepath.Join(dir, de.Name()))
			}
			break
		}
	}
}

// Segment escapes s into one path segment: no "/", no leading dot (never "..", a temp file, or hidden).
func Segment(s string) string {
	e := url.PathEscape(s)
	if strings.HasPrefix(e, ".") {
		e = "%2E" + e[1:]
	}
	return e
}

// Unsegment reverses Segment.
func Unsegment(s string) string {
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}
