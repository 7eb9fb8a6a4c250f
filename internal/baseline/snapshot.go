// Package baseline records, when a prompt is armed, the state of the files
// its diff checks name, and judges at the stop what changed since: a file
// that must have changed (changed), lines that must not or must have been
// added (added_lacks, added_matches).
//
// The record lies in the protected state dir beside the queue entry, and
// is written once, when the entry is created: re-arming the prompt must
// not move the baseline past the agent's own edits. Anything the record
// cannot say (taken before this feature, gone, corrupt, a file over the
// caps that changed) is "could not judge", never a pass.
package baseline

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/regular"
)

// Version is the record's format. 2: the files of `in` are chosen with
// git's pattern rules (internal/pattern); a record of format 1 chose them
// otherwise, and judging it by the new rules could pass an added file it
// never held, so it cannot judge (the check fails, the stop is blocked).
const Version = 2

// The caps of a record. A file is hashed whole up to maxHash and kept
// whole up to maxText, while the record holds at most maxTotal of text;
// past them, a file that changed cannot be judged.
const (
	maxHash  = 64 << 20
	maxText  = 1 << 20
	maxTotal = 16 << 20
)

// Want is what a mapping's diff checks name.
type Want struct {
	Changed []string // paths relative to the root
	In      []string // gitignore-style patterns (package pattern)
	Tree    bool     // every file's hash, for the files changed since (tree.go)
}

// Empty reports whether there is nothing to record.
func (w Want) Empty() bool { return len(w.Changed) == 0 && len(w.In) == 0 && !w.Tree }

// Snapshot is the record taken at arming.
type Snapshot struct {
	Version int              `json:"version"`
	Changed map[string]State `json:"changed,omitempty"`
	In      []string         `json:"in,omitempty"`    // the patterns whose files Files holds
	Files   map[string]State `json:"files,omitempty"` // every file they matched
	WalkErr string           `json:"walk_error,omitempty"`
	// Tree is every file's state, hashes only (tree.go); nil: not taken.
	Tree map[string]State `json:"tree"`
}

// State is one file's state.
type State struct {
	Exists bool   `json:"exists,omitempty"`
	Sum    string `json:"sum,omitempty"` // SHA-256 of the content; in Tree, the stamp
	Text   []byte `json:"text,omitempty"`
	Kept   bool   `json:"kept,omitempty"` // Text is the whole content
	Err    string `json:"error,omitempty"`
}

// Take records the state of what w names under root, skipping the dirs
// in skip (the state dir). Errors are recorded, not returned: a check
// that needs what could not be read cannot judge.
func Take(root string, w Want, skip []string) *Snapshot {
	in := positive(w.In)
	set, err := pattern.Compile(in)
	if len(w.In) == 0 {
		set = nil // no files to list
	}
	s := read(root, w.Changed, set, skip, maxTotal)
	s.In = in
	if err != nil {
		s.WalkErr = err.Error()
	}
	if w.Tree {
		s.Tree, _ = tree(root, skip)
	}
	return s
}

// read is the state under root of the changed paths and of the files set
// selects (none when nil), keeping their text while budget allows: what
// Take records, and what a check compares it with at the stop.
func read(root string, changed []string, set *pattern.Set, skip []string, budget int64) *Snapshot {
	s := &Snapshot{Version: Version, Changed: map[string]State{}}
	for _, p := range changed {
		s.Changed[p] = stateOf(filepath.Join(root, filepath.FromSlash(p)), nil)
	}
	if set == nil {
		return s
	}
	paths, links, err := walk(root, set, skip)
	if err != nil {
		s.WalkErr = err.Error()
	}
	s.Files = make(map[string]State, len(paths)+len(links))
	for _, p := range paths {
		s.Files[p] = stateOf(filepath.Join(root, filepath.FromSlash(p)), &budget)
	}
	for _, p := range links {
		s.Files[p] = State{Err: linkedDir}
	}
	return s
}

// linkedDir is the state of a symbolic link to a folder whose files the
// patterns could select: a finding, never a folder with no files (tests/
// swapped for a link to a copy with a skip added read as deleted, and
// added_lacks passed).
const linkedDir = "a symbolic link to a folder, which diff checks do not follow (put the folder itself there, or leave the link out of in with a ! pattern)"

// Write stores s at path, atomically.
func (s *Snapshot) Write(path string, write func(string, []byte) error) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return write(path, data)
}

// Load reads the record at path.
func Load(path string) (*Snapshot, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, 3*maxTotal))
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

// stateOf reads the state of the file at path, keeping its text while
// budget (nil: keep none) allows. A symbolic link is followed: what a
// tool reads through it is the file.
func stateOf(path string, budget *int64) State {
	// A named pipe the agent left under a test's name is refused
	// (regular.Open), its error "not a regular file".
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
	st := State{Exists: true}
	keep := budget != nil && info.Size() <= maxText && info.Size() <= *budget
	h := sha256.New()
	var r io.Reader = io.LimitReader(f, maxHash+1)
	if keep {
		data, err := io.ReadAll(r)
		if err != nil {
			return State{Err: unwrap(err)}
		}
		if len(data) <= maxText && int64(len(data)) <= *budget {
			st.Text, st.Kept = data, true
			*budget -= int64(len(data))
		}
		h.Write(data)
	} else if _, err := io.Copy(h, r); err != nil {
		return State{Err: unwrap(err)}
	}
	st.Sum = hex.EncodeToString(h.Sum(nil))
	return st
}

// positive returns the patterns of pats that select, leaving out the "!"
// ones. Their files are a superset of what any list of them selects: the
// record holds every file that each check of a mapping looks at.
func positive(pats []string) []string {
	var out []string
	for _, p := range pats {
		if !strings.HasPrefix(p, "!") {
			out = append(out, p)
		}
	}
	return out
}

// walk returns the slash paths, relative to root and sorted, of the files
// set selects, skipping .git and the dirs in skip, and of the symbolic
// links to folders set may enter. A directory it cannot read is an error:
// what lies there is unknown.
func walk(root string, set *pattern.Set, skip []string) (out, links []string, _ error) {
	var walkErr error
	err := filepath.WalkDir(root, func(path string, de fs.DirEntry, err error) error {
		if err != nil {
			if walkErr == nil {
				walkErr = err
			}
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
				if set.MayEnter(rel) { // never followed into (a loop, or outside the root): a finding
					links = append(links, rel)
				}
				return nil
			}
		}
		if set.Match(rel) {
			out = append(out, rel)
		}
		return nil
	})
	if err == nil {
		err = walkErr
	}
	sort.Strings(out)
	return out, links, err
}

// unwrap drops the path from an error: the messages name the file already.
func unwrap(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
