package reuse

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/pattern"
)

// TestChanges: each way a file can change changes the fingerprint, in a
// git work tree and outside one, with the stat cache and without; a file
// git ignores counts as any other, a file in a skipped folder does not.
func TestChanges(t *testing.T) {
	for _, git := range []bool{true, false} {
		for _, cached := range []bool{true, false} {
			root := t.TempDir()
			write(t, root, "a.go", "package a\n")
			write(t, root, "b/c.txt", "c\n")
			write(t, root, "state/x", "ours\n")
			if git {
				run(t, root, "git", "init", "-q")
				write(t, root, ".gitignore", "ignored/\n")
				write(t, root, "ignored/y", "y\n")
				run(t, root, "git", "add", "a.go")
			}
			o := Options{Skip: []string{filepath.Join(root, "state")}}
			if cached {
				o.Cache = filepath.Join(t.TempDir(), "cache")
			}
			sum := func() string {
				t.Helper()
				tr, err := Take(context.Background(), root, o)
				if err != nil {
					t.Fatal(err)
				}
				return tr.Sum(nil)
			}
			base := sum()
			backdate(t, root) // so that the cache trusts its entries
			if again := sum(); again != base {
				t.Fatalf("git=%v cached=%v: unchanged tree changed its sum", git, cached)
			}
			if again := sum(); again != base {
				t.Fatalf("git=%v cached=%v: the cached sum differs", git, cached)
			}
			steps := []struct {
				name string
				do   func()
			}{
				{"edit", func() { write(t, root, "a.go", "package b\n") }},
				{"same size, old time", func() {
					write(t, root, "a.go", "package c\n")
					backdate(t, root)
				}},
				{"new file", func() { write(t, root, "d.txt", "d\n") }},
				{"deletion", func() { os.Remove(filepath.Join(root, "d.txt")) }},
				{"rename", func() { os.Rename(filepath.Join(root, "b/c.txt"), filepath.Join(root, "b/e.txt")) }},
				{"mode", func() { os.Chmod(filepath.Join(root, "a.go"), 0o755) }},
				{"symlink", func() { os.Symlink("a.go", filepath.Join(root, "l")) }},
			}
			prev := base
			for _, s := range steps {
				s.do()
				if now := sum(); now == prev {
					t.Errorf("git=%v cached=%v: %s left the sum as it was", git, cached, s.name)
				} else {
					prev = now
				}
			}
			write(t, root, "state/x", "changed\n")
			if now := sum(); now != prev {
				t.Errorf("git=%v: a skipped file changed the sum", git)
			}
			if git {
				write(t, root, "ignored/y", "changed\n")
				if now := sum(); now == prev {
					t.Errorf("cached=%v: a file git ignores left the sum as it was", cached)
				}
			}
		}
	}
}

func TestWant(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.go", "a\n")
	write(t, root, "README.md", "r\n")
	ps, _ := pattern.Compile([]string{"*.go"})
	take := func() string {
		tr, err := Take(context.Background(), root, Options{Want: ps.Match})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Sum(ps.Match)
	}
	base := take()
	write(t, root, "README.md", "changed\n")
	if take() != base {
		t.Error("a file outside the patterns changed the sum")
	}
	write(t, root, "a.go", "changed\n")
	if take() == base {
		t.Error("a file inside the patterns left the sum as it was")
	}
}

func TestClockBackwards(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a", "a\n")
	cache := filepath.Join(t.TempDir(), "cache")
	c := newCache(time.Now().Add(time.Hour))
	if err := c.save(cache); err != nil {
		t.Fatal(err)
	}
	if _, err := Take(context.Background(), root, Options{Cache: cache}); err != ErrClock {
		t.Errorf("err = %v, want ErrClock", err)
	}
}

func write(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// backdate sets every file's modification time an hour back. Its change
// time stays now: the cache must still see the change.
func backdate(t *testing.T, root string) {
	old := time.Now().Add(-time.Hour)
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
}

func run(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

// TestCacheTrusted: a file that had not changed for a second when its
// entry was written is taken from the cache (a forged entry shows it),
// and a change of its content, however its times are set, is not.
func TestCacheTrusted(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.txt", "one\n")
	cache := filepath.Join(t.TempDir(), "cache")
	time.Sleep(1100 * time.Millisecond) // past the racy second
	take := func() string {
		t.Helper()
		tr, err := Take(context.Background(), root, Options{Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		return tr.Sum(nil)
	}
	base := take()
	c, err := loadCache(cache, time.Now())
	if err != nil || c == nil {
		t.Fatalf("the cache did not load: %v", err)
	}
	e, ok := c.Entries["a.txt"]
	if !ok || e.Sum != [32]byte(sha256Of("one\n")) {
		t.Fatalf("the cache lacks a.txt's hash: %+v", c.Entries)
	}
	e.Sum = [32]byte{} // forged
	c.Entries["a.txt"] = e
	if err := c.save(cache); err != nil {
		t.Fatal(err)
	}
	if take() == base {
		t.Fatal("the cache was not consulted")
	}
	// Same size, its old modification time back: the change time moved.
	info, _ := os.Stat(filepath.Join(root, "a.txt"))
	write(t, root, "a.txt", "two\n")
	os.Chtimes(filepath.Join(root, "a.txt"), info.ModTime(), info.ModTime())
	after := take()
	os.Remove(cache)
	if fresh := take(); after != fresh {
		t.Error("a rewritten file was taken from the cache")
	}
}

func sha256Of(s string) []byte {
	sum := sha256.Sum256([]byte(s))
	return sum[:]
}

// TestStill: a file moved away and back while a validator ran has the
// content it had, not the stat: the tree did not stay still.
func TestStill(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a.go", "package a // TODO\n")
	write(t, root, "b.go", "package b\n")
	take := func() *Tree {
		t.Helper()
		tr, err := Take(context.Background(), root, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	before := take()
	if !before.Still(take(), nil) {
		t.Fatal("an untouched tree did not stay still")
	}
	a, away := filepath.Join(root, "a.go"), filepath.Join(t.TempDir(), "a.go")
	os.Rename(a, away)
	write(t, root, "a.go", "package a\n")
	os.Remove(a)
	os.Rename(away, a)
	after := take()
	if before.Sum(nil) != after.Sum(nil) {
		t.Fatal("the file moved back changed the sum")
	}
	if before.Still(after, nil) {
		t.Error("a file swapped and moved back left the tree still")
	}
	if !before.Still(after, func(rel string) bool { return rel == "b.go" }) {
		t.Error("a file outside the selection counted")
	}
}

// TestTakeDeadline: a sparse file too large to hash by the deadline is
// an error, not a late answer.
func TestTakeDeadline(t *testing.T) {
	root := t.TempDir()
	f, err := os.Create(filepath.Join(root, "big.bin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(400 << 30); err != nil {
		t.Skipf("no sparse file here: %v", err)
	}
	f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, err := Take(ctx, root, Options{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want the deadline", err)
	}
}

func newCache(now time.Time) *cache {
	return &cache{Format: cacheFormat, At: now.UnixNano(), Entries: map[string]cached{}}
}
