// Package baseline records, at arming, the files a prompt's diff checks
// name, and judges at the stop what changed since (docs/config.md);
// what a record cannot say is "could not judge", never a pass.
package baseline

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/regular"
)

// Version is the record's format: 2 chooses in's files by git's rules; a
// record of 1, judged by them, could pass an added file it never held.
const Version = 2

// A file is hashed up to maxHash, its text kept up to maxText (maxTotal a record).
const (
	maxHash  = 64 << 20
	maxText  = 1 << 20
	maxTotal = 16 << 20
)

// Want is what a mapping's diff checks name.
type Want struct {
	Changed []string // paths relative to the root
	In      []string // gitignore-style patterns (package pattern)
	Tree    bool     // every file's stamp, for the files changed since (ChangedSince)
}

func (w Want) Empty() bool { return len(w.Changed) == 0 && len(w.In) == 0 && !w.Tree }

// Snapshot is the record taken at arming.
type Snapshot struct {
	Version int              `json:"version"`
	Changed map[string]State `json:"changed,omitempty"`
	In      []string         `json:"in,omitempty"`    // the patterns whose files Files holds
	Files   map[string]State `json:"files,omitempty"` // every file they matched
	WalkErr string           `json:"walk_error,omitempty"`
	Tree    map[string]State `json:"tree"` // every file's stamp; nil: not taken
}

// State is one file's state.
type State struct {
	Exists bool   `json:"exists,omitempty"`
	Sum    string `json:"sum,omitempty"` // SHA-256 of the content; in Tree, the stamp
	Text   []byte `json:"text,omitempty"`
	Kept   bool   `json:"kept,omitempty"` // Text is the whole content
	Err    string `json:"error,omitempty"`
}

// Take records what w names under root but skip (the state dir), errors too.
func Take(root string, w Want, skip []string) *Snapshot {
	in := positive(w.In)
	set, err := pattern.Compile(in)
	s := read(root, w.Changed, in, set, skip, maxTotal)
	s.In = in
	if err != nil {
		s.WalkErr = err.Error()
	}
	if w.Tree {
		s.Tree = tree(root, skip)
	}
	return s
}

// read states the changed paths and the files set (compiled from in) selects, texts while budget allows.
func read(root string, changed, in []string, set *pattern.Set, skip []string, budget int64) *Snapshot {
	s := &Snapshot{Version: Version, Changed: map[string]State{}}
	for _, p := range changed {
		s.Changed[p] = stateOf(filepath.Join(root, filepath.FromSlash(p)), nil)
	}
	if set == nil || len(in) == 0 {
		return s // no files to list
	}
	var err error
	s.Files, err = walk(root, set, skip, math.MaxInt, func(path string) State { return stateOf(path, &budget) })
	if err != nil {
		s.WalkErr = err.Error()
	}
	return s
}

// linkedDir is a link to a folder in may enter: a finding, not an empty
// folder (tests/ swapped for a link to a skipping copy read as deleted).
const linkedDir = "a symbolic link to a folder, which diff checks do not follow (put the folder itself there, or leave the link out of in with a ! pattern)"

// Write stores s at path through write.
func (s *Snapshot) Write(path string, write func(string, []byte) error) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return write(path, data)
}

// Load reads the record at path.
func Load(path string) (*Snapshot, error) {
	data, err := regular.ReadFile(path, 3*maxTotal)
	if err != nil {
		return nil, err
	}
	var s Snapshot
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, err
	}
	if s.Version != Version {
		return nil, fmt.Errorf("format %d, not %d", s.Version, Version)
	}
	return &s, nil
}

// stateOf reads the file at path (links followed, a named pipe refused), its text while budget allows.
func stateOf(path string, budget *int64) State {
	f, info, err := regular.Open(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return State{}
	case err != nil:
		return State{Err: unwrap(err)}
	}
	defer f.Close()
	if info.Size() > maxHash {
		return State{Err: fmt.Sprintf("over %d MiB", maxHash>>20)}
	}
	keep := budget != nil && info.Size() <= maxText && info.Size() <= *budget
	h, text := sha256.New(), &bytes.Buffer{}
	w := io.Writer(h)
	if keep {
		w = io.MultiWriter(h, text)
	}
	if _, err := io.Copy(w, io.LimitReader(f, maxHash+1)); err != nil {
		return State{Err: unwrap(err)}
	}
	st := State{Exists: true, Sum: hex.EncodeToString(h.Sum(nil))}
	if n := int64(text.Len()); keep && n <= maxText && n <= *budget {
		st.Text, st.Kept = text.Bytes(), true
		*budget -= n
	}
	return st
}

// positive is pats without the "!" ones: a superset of any check's files.
func positive(pats []string) []string {
	return slices.DeleteFunc(slices.Clone(pats), func(p string) bool { return strings.HasPrefix(p, "!") })
}

// walk states the files under root but .git and skip that set selects, and links to folders; past most, none.
func walk(root string, set *pattern.Set, skip []string, most int, state func(path string) State) (map[string]State, error) {
	var paths []string
	var walkErr error
	m := map[string]State{}
	filepath.WalkDir(root, func(path string, de fs.DirEntry, err error) error { // fn's errors only
		if err != nil {
			walkErr = cmp.Or(walkErr, err)
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if de.IsDir() {
			if path != root && (de.Name() == ".git" || slices.Contains(skip, path) || !set.MayEnter(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if de.Type()&fs.ModeSymlink != 0 {
			if info, err := os.Stat(path); err == nil && info.IsDir() {
				if set.MayEnter(rel) { // not followed (a loop, outside the root): a finding
					m[rel] = State{Err: linkedDir}
				}
				return nil
			}
		}
		if set.Match(rel) {
			paths = append(paths, rel)
		}
		return nil
	})
	if len(paths) > most {
		return nil, errTreeSize
	}
	slices.Sort(paths)
	for _, p := range paths {
		m[p] = state(filepath.Join(root, filepath.FromSlash(p)))
	}
	return m, walkErr
}

// unwrap drops the path from an error: the messages name the file.
func unwrap(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// everything selects every file, for the record of the whole tree.
var everything = sync.OnceValue(func() *pattern.Set {
	s, _ := pattern.Compile([]string{"*"})
	return s
})

// maxTree bounds the record of the whole tree: past it none is taken.
const maxTree = 200_000

var errTreeSize = fmt.Errorf("more than %d files", maxTree)

// tree is the regular.Stamp (its ctime shows a restored mtime) of every file under root but .git and skip; nil on error.
func tree(root string, skip []string) map[string]State {
	if t, err := walk(root, everything(), skip, maxTree, stampState); err == nil {
		return t
	}
	return nil
}

// ChangedSince returns, per record, the files changed or unreadable since, sorted; nil when unknown.
func ChangedSince(root string, records []string, skip []string) [][]string {
	out := make([][]string, len(records))
	var now map[string]State
	for i, rec := range records {
		s, err := Load(rec)
		if err != nil || s.Tree == nil {
			continue
		}
		if now == nil {
			if now = tree(root, skip); now == nil {
				return make([][]string, len(records))
			}
		}
		out[i] = diffTree(s.Tree, now)
	}
	return out
}

// diffTree is the sorted paths that differ or are unreadable; never nil.
func diffTree(was, now map[string]State) []string {
	out := []string{}
	for p, w := range was {
		if n, ok := now[p]; !ok || n.Sum != w.Sum || n.Err+w.Err != "" {
			out = append(out, p)
		}
	}
	for p := range now {
		if _, ok := was[p]; !ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// stampState is a file's state in the tree: its stamp as Sum, links followed.
func stampState(path string) State {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return State{}
	case err != nil:
		return State{Err: unwrap(err)}
	}
	return State{Exists: true, Sum: regular.StampOf(fi).String()}
}
