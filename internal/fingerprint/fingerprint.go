// Package fingerprint hashes the project's working tree, so that the gate
// can tell whether anything a passed validator depends on has changed
// since it passed (package stop, reuse.go).
//
// The files are those git would see: in a git work tree, the tracked and
// the untracked files that are not ignored (git ls-files); elsewhere every
// file under the root. Each counts by its path, its kind (a file, an
// executable, a symbolic link) and the SHA-256 of its content, not by its
// stat: a file touched back to its old time still counts as changed.
//
// Hashing a large tree at every stop would cost more than most checks, so
// a stat cache remembers each file's hash beside the stat it had, and a
// file whose stat is as recorded is not read again. The cache lives in the
// protected state dir, never in git's index, which the agent can rewrite
// (stat fields and object names alike) to make a changed file look clean.
// The change time, which no one sets at will, is part of the stat, and an
// entry written less than a second after its file changed is not trusted
// (the same file can change again within the clock's granularity).
package fingerprint

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stopgate/stopgate/internal/regular"
)

// File is one file of the tree.
type File struct {
	Path string // relative to the root, slash-separated
	Kind byte   // 'f' a file, 'x' an executable file, 'l' a symbolic link
	Sum  [sha256.Size]byte
}

// Tree is the hashed working tree, its files sorted by path.
type Tree struct {
	Files []File
	// Git tells that git listed the files.
	Git bool
}

// Options says what Take lists and where its cache is.
type Options struct {
	// Skip lists directories (relative, slash-separated) left out: the
	// state dir, which the gate itself writes at every stop.
	Skip []string
	// Want, when set, selects the files hashed; the others are left out
	// of the tree.
	Want func(rel string) bool
	// Cache is the stat cache's path; "" hashes every file.
	Cache string
	// Timeout bounds the listing by git (default 10s).
	Timeout time.Duration
}

// ErrClock is a stat cache written after now: the clock went backwards,
// so no recorded stat can be trusted and no record of a pass either.
var ErrClock = errors.New("the clock went backwards")

// Take lists and hashes the working tree at root. Any file it cannot read,
// and git failing in a git work tree, is an error: the caller must then
// take nothing as unchanged.
func Take(root string, o Options) (*Tree, error) {
	now := time.Now()
	paths, git, err := list(root, o)
	if err != nil {
		return nil, err
	}
	c, err := loadCache(o.Cache, now)
	if errors.Is(err, ErrClock) {
		return nil, err
	}
	t := &Tree{Git: git, Files: make([]File, 0, len(paths))}
	next := newCache(now)
	var todo []string
	for _, rel := range paths {
		switch {
		case skipped(rel, o.Skip):
		case o.Want != nil && !o.Want(rel):
			next.keep(c, rel) // for a later stop that wants it
		default:
			todo = append(todo, rel)
		}
	}
	hashed, err := hashAll(root, todo, c, git)
	if err != nil {
		return nil, err
	}
	misses := 0
	for _, h := range hashed {
		if h.file.Path == "" {
			continue // gone since git listed it, or a directory (a submodule)
		}
		t.Files = append(t.Files, h.file)
		next.put(h.file.Path, h.st, h.file)
		if !h.hit {
			misses++
		}
	}
	slices.SortFunc(t.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	// Unchanged when every file came from the cache and none came or went.
	if o.Cache != "" && (c == nil || misses > 0 || len(next.entries) != len(c.entries)) {
		next.save(o.Cache) // a cache not written costs the next stop a rehash, never a wrong answer
	}
	return t, nil
}

// Sum is the fingerprint of the files match selects (all for nil): their
// paths, kinds and content hashes.
func (t *Tree) Sum(match func(rel string) bool) string {
	h := sha256.New()
	for _, f := range t.Files {
		if match != nil && !match(f.Path) {
			continue
		}
		h.Write([]byte(f.Path))
		h.Write([]byte{0, f.Kind})
		h.Write(f.Sum[:])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func skipped(rel string, skip []string) bool {
	for _, s := range skip {
		if s != "" && (rel == s || strings.HasPrefix(rel, s+"/")) {
			return true
		}
	}
	return false
}

// list returns the files of the tree: git's list in a git work tree (git
// found and root inside a work tree), else a walk of root.
func list(root string, o Options) (paths []string, git bool, err error) {
	if _, err := os.Stat(filepath.Join(root, ".git")); err != nil {
		if _, err := exec.LookPath("git"); err != nil || !insideWorkTree(root, o.Timeout) {
			paths, err := walk(root, o.Skip)
			return paths, false, err
		}
	}
	paths, err = gitList(root, o.Timeout)
	return paths, true, err
}

// insideWorkTree asks git, within timeout like gitList, whether root lies
// in a work tree.
func insideWorkTree(root string, timeout time.Duration) bool {
	ctx, cancel := gitContext(timeout)
	defer cancel()
	out, err := gitCmd(ctx, root, "rev-parse", "--is-inside-work-tree").Output()
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// gitContext bounds a git command by timeout, 10 s when unset.
func gitContext(timeout time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), cmp.Or(max(timeout, 0), 10*time.Second))
}

// gitList is git ls-files: the tracked files and the untracked ones not
// ignored, once each. Paths are relative to root even when root is below
// the work tree's top.
func gitList(root string, timeout time.Duration) ([]string, error) {
	ctx, cancel := gitContext(timeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd := gitCmd(ctx, root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--deduplicate")
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("fingerprint: git ls-files: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	var paths []string
	for p := range bytes.SplitSeq(out, []byte{0}) {
		if len(p) > 0 {
			paths = append(paths, string(p))
		}
	}
	return paths, nil
}

// gitCmd runs git in dir with the settings that could hide files or let
// git write its index turned off: the agent can set any of them.
func gitCmd(ctx context.Context, dir string, args ...string) *exec.Cmd {
	base := []string{"-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "-c", "core.quotePath=false"}
	cmd := exec.CommandContext(ctx, "git", append(base, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "LC_ALL=C")
	cmd.WaitDelay = time.Second
	return cmd
}

// walk lists every file under root but .git and the skipped directories.
func walk(root string, skip []string) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (d.Name() == ".git" || skipped(rel, skip)) {
				return filepath.SkipDir
			}
			return nil
		}
		paths = append(paths, rel)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	return paths, nil
}

type hashed struct {
	file File
	st   stat
	hit  bool // from the cache
}

// hashAll hashes the files at paths, a few at a time: the stat and read
// calls wait on the file system, not on the CPU.
func hashAll(root string, paths []string, c *cache, git bool) ([]hashed, error) {
	out := make([]hashed, len(paths))
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, rel := range paths {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f, st, hit, err := hashFile(root, rel, c)
			if errors.Is(err, fs.ErrNotExist) && git {
				return // listed by git and deleted since: gone from the tree
			}
			out[i], errs[i] = hashed{file: f, st: st, hit: hit}, err
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("fingerprint: %w", err)
		}
	}
	return out, nil
}

// hashFile hashes one file, from the cache when its stat is as recorded.
// A directory gives a File with no Path.
func hashFile(root, rel string, c *cache) (File, stat, bool, error) {
	p := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if err != nil {
		return File{}, stat{}, false, err
	}
	st := statOf(fi)
	f := File{Path: rel, Kind: 'f'}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		f.Kind = 'l'
		target, err := os.Readlink(p)
		if err != nil {
			return File{}, st, false, err
		}
		f.Sum = sha256.Sum256([]byte(target))
		return f, st, true, nil // no cache to miss: a link's target is its content
	case fi.IsDir():
		return File{}, st, false, nil
	case !fi.Mode().IsRegular():
		return File{}, st, false, fmt.Errorf("%s: not a regular file", rel)
	case fi.Mode()&0o111 != 0:
		f.Kind = 'x'
	}
	if sum, ok := c.get(rel, st); ok {
		f.Sum = sum
		return f, st, true, nil
	}
	// Opened through regular: a named pipe swapped in since the Lstat
	// would hold the open for ever.
	fh, _, err := regular.Open(p)
	if errors.Is(err, regular.ErrNotRegular) {
		return File{}, st, false, fmt.Errorf("%s: not a regular file", rel)
	}
	if err != nil {
		return File{}, st, false, err
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return File{}, st, false, fmt.Errorf("%s: %w", rel, err)
	}
	copy(f.Sum[:], h.Sum(nil))
	return f, st, false, nil
}
