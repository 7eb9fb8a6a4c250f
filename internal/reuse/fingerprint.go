package reuse

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/gob"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stopgate/stopgate/internal/atomicfile"
	"github.com/stopgate/stopgate/internal/regular"
)

// File is one file of the tree.
type File struct {
	Path string // relative to the root, slash-separated
	Kind byte   // 'f' a file, 'x' an executable file, 'l' a symbolic link
	Sum  [sha256.Size]byte
	st   regular.Stamp // as it was hashed: a file rewritten or swapped since shows here
}

// Tree is the working tree's files sorted by path, hashed: all but .git and the skipped, ignoring no rule.
type Tree struct {
	Files []File
}

// Options says what Take lists and where its cache is.
type Options struct {
	Skip  []string              // directories left out (relative, slash-separated)
	Want  func(rel string) bool // nil: every file; else the files hashed
	Cache string                // the stat cache's path (never git's index); "": hash every file
}

// ErrClock is a stat cache written after now: no recorded stat or pass can be trusted.
var ErrClock = errors.New("the clock went backwards")

// Take lists and hashes the tree at root; an unreadable file or ctx done first is an error: nothing is reused.
func Take(ctx context.Context, root string, o Options) (*Tree, error) {
	now := time.Now()
	paths, err := walk(ctx, root, o.Skip)
	if err != nil {
		return nil, err
	}
	c, err := loadCache(o.Cache, now)
	if errors.Is(err, ErrClock) {
		return nil, err
	}
	t := &Tree{Files: make([]File, 0, len(paths))}
	next := newCache(now)
	var todo []string
	for _, rel := range paths {
		if o.Want != nil && !o.Want(rel) {
			next.keep(c, rel) // for a later stop that wants it
		} else {
			todo = append(todo, rel)
		}
	}
	hashed, misses, err := hashAll(ctx, root, todo, c)
	if err != nil {
		return nil, err
	}
	for _, f := range hashed {
		if f.Path != "" { // "": gone since the walk listed it
			t.Files = append(t.Files, f)
			next.Entries[f.Path] = cached{St: f.st, Sum: f.Sum}
		}
	}
	slices.SortFunc(t.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	// Unchanged when every file came from the cache and none came or went.
	if o.Cache != "" && (c == nil || misses > 0 || len(next.Entries) != len(c.Entries)) {
		next.save(o.Cache) // a cache not written costs the next stop a rehash, never a wrong answer
	}
	return t, nil
}

// Sum is the fingerprint (paths, kinds, content hashes) of the files match selects (nil: all).
func (t *Tree) Sum(match func(rel string) bool) string {
	h := sha256.New()
	for _, f := range t.Files {
		if match == nil || match(f.Path) {
			h.Write([]byte(f.Path))
			h.Write([]byte{0, f.Kind})
			h.Write(f.Sum[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Still tells whether the files match selects (nil: all) are in u as in t, stat and all (a swap shows in ctime).
func (t *Tree) Still(u *Tree, match func(rel string) bool) bool {
	sel := func(fs []File) []File {
		return slices.DeleteFunc(slices.Clone(fs), func(f File) bool { return match != nil && !match(f.Path) })
	}
	return slices.Equal(sel(t.Files), sel(u.Files))
}

// walk lists every file under root but those in .git folders and the skipped directories.
func walk(ctx context.Context, root string, skip []string) ([]string, error) {
	var paths []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && (d.Name() == ".git" || slices.ContainsFunc(skip, func(s string) bool { return s != "" && (rel == s || strings.HasPrefix(rel, s+"/")) })) {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Name() != ".git" { // a linked worktree's or a submodule's pointer file
			paths = append(paths, rel)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("fingerprint: %w", err)
	}
	return paths, nil
}

// hashAll hashes the files a few at a time and counts those not taken from the cache.
func hashAll(ctx context.Context, root string, paths []string, c *cache) ([]File, int, error) {
	out := make([]File, len(paths))
	errs := make([]error, len(paths))
	var misses atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, rel := range paths {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			f, hit, err := hashFile(ctx, root, rel, c)
			if out[i], errs[i] = f, err; !hit {
				misses.Add(1)
			}
			if errors.Is(errs[i], fs.ErrNotExist) {
				out[i], errs[i] = File{}, nil // deleted since the walk: gone from the tree
			}
		})
	}
	wg.Wait()
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return nil, 0, fmt.Errorf("fingerprint: %w", err)
	}
	return out, int(misses.Load()), nil
}

// hashFile hashes one file, from the cache when its stat is as recorded.
func hashFile(ctx context.Context, root, rel string, c *cache) (File, bool, error) {
	p := filepath.Join(root, filepath.FromSlash(rel))
	fi, err := os.Lstat(p)
	if err != nil {
		return File{}, false, err
	}
	f := File{Path: rel, Kind: 'f', st: regular.StampOf(fi)}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		f.Kind = 'l'
		target, err := os.Readlink(p)
		f.Sum = sha256.Sum256([]byte(target))
		return f, true, err // no cache to miss: a link's target is its content
	case !fi.Mode().IsRegular():
		return File{}, false, fmt.Errorf("%s: not a regular file", rel)
	case fi.Mode()&0o111 != 0:
		f.Kind = 'x'
	}
	if sum, ok := c.get(rel, f.st); ok {
		f.Sum = sum
		return f, true, nil
	}
	// Through regular: a named pipe swapped in since would hold the open.
	fh, _, err := regular.Open(p)
	if errors.Is(err, regular.ErrNotRegular) {
		return File{}, false, fmt.Errorf("%s: not a regular file", rel)
	}
	if err != nil {
		return File{}, false, err
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.CopyBuffer(h, ctxReader{ctx, fh}, make([]byte, 1<<20)); err != nil {
		return File{}, false, fmt.Errorf("%s: %w", rel, err)
	}
	copy(f.Sum[:], h.Sum(nil))
	return f, false, nil
}

// ctxReader reads r until ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// racy is how long after a file's change its recorded hash is not trusted (clock granularity).
const racy = int64(time.Second)

// cacheFormat is the cache's format; a file of another is no cache.
const cacheFormat = "stopgate-fingerprint-cache 2"

// cache maps a file's path to its stat and hash as recorded at At (Unix ns); its file is gob.
type cache struct {
	Format  string
	At      int64
	Entries map[string]cached
}

type cached struct {
	St  regular.Stamp
	Sum [sha256.Size]byte
}

func newCache(now time.Time) *cache {
	return &cache{Format: cacheFormat, At: now.UnixNano(), Entries: map[string]cached{}}
}

// settled returns rel's entry when it had not changed for a while when recorded.
func (c *cache) settled(rel string) (cached, bool) {
	if c == nil {
		return cached{}, false
	}
	e, ok := c.Entries[rel]
	return e, ok && e.St.Changed()+racy <= c.At
}

// get returns the recorded hash of rel when its stat is as recorded.
func (c *cache) get(rel string, st regular.Stamp) ([sha256.Size]byte, bool) {
	e, ok := c.settled(rel)
	return e.Sum, ok && e.St == st
}

// keep carries rel's entry in old over, unchecked: a later get checks it.
func (c *cache) keep(old *cache, rel string) {
	if e, ok := old.settled(rel); ok {
		c.Entries[rel] = e
	}
}

// loadCache reads the cache at path: nil when missing or undecodable, ErrClock when from the future.
func loadCache(path string, now time.Time) (*cache, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	var c cache
	if gob.NewDecoder(f).Decode(&c) != nil || c.Format != cacheFormat {
		return nil, nil
	}
	if c.At > now.UnixNano() {
		return nil, ErrClock
	}
	return &c, nil
}

func (c *cache) save(path string) error {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(c); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, b.Bytes(), atomicfile.Options{TempPrefix: ".fingerprint-", NoSync: true})
}
