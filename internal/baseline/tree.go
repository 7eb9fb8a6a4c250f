package baseline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/regular"
)

// everything selects every file, for the record of the whole tree.
var everything, _ = pattern.Compile([]string{"*"})

// maxTree is the most files the record of the whole tree holds: past it
// the record is not taken, and the files changed since are unknown (every
// validator runs). A matched Read arms through this walk, on the hook path.
const maxTree = 200_000

// errTreeSize is a tree over maxTree files.
var errTreeSize = fmt.Errorf("more than %d files", maxTree)

// tree is the state of every file under root but .git and the dirs in
// skip: each file's stamp (regular.Stamp), not its content, so arming
// costs a stat a file, not a read of the project (node_modules and
// all). The stamp's change time is the kernel's: an edit with its
// modification time put back still shows. A file touched but unchanged
// counts as changed: a validator runs that could have been skipped,
// never the reverse. nil when the tree could not be listed.
func tree(root string, skip []string) (map[string]State, error) {
	paths, links, err := walk(root, everything, skip)
	if err != nil {
		return nil, err
	}
	if len(paths) > maxTree {
		return nil, errTreeSize
	}
	t := make(map[string]State, len(paths)+len(links))
	for _, p := range paths {
		t[p] = stampState(filepath.Join(root, filepath.FromSlash(p)))
	}
	for _, p := range links {
		t[p] = State{Err: linkedDir}
	}
	return t, nil
}

// ChangedSince returns, for each record, the files under root changed
// since it was taken: added, deleted or edited, sorted; a file that
// could not be read then or now counts as changed. An element is nil
// ("unknown", never "nothing changed") when its record holds no tree (no
// record, one taken by an older stopgate, unreadable) or the tree cannot
// be listed now.
func ChangedSince(root string, records []string, skip []string) [][]string {
	out := make([][]string, len(records))
	var now map[string]State
	for i, rec := range records {
		s, err := Load(rec)
		if err != nil || s.Tree == nil {
			continue
		}
		if now == nil {
			if now, err = tree(root, skip); err != nil {
				return make([][]string, len(records))
			}
		}
		out[i] = diffTree(s.Tree, now)
	}
	return out
}

// diffTree is the sorted paths whose state differs between was and now,
// or that either could not read; never nil.
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

// stampState is a file's state in the record of the whole tree: its
// stamp as Sum, links followed.
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
