package baseline

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/regular"
)

// everything selects every file, for the record of the whole tree.
var everything, _ = pattern.Compile([]string{"*"})

// maxTree bounds the record of the whole tree (taken on the hook path):
// past it none is taken, and every validator runs.
const maxTree = 200_000

var errTreeSize = fmt.Errorf("more than %d files", maxTree)

// tree is the stamp (regular.Stamp: its ctime shows an edit with its mtime
// put back) of every file under root but .git and skip: a stat, no read.
func tree(root string, skip []string) (map[string]State, error) {
	t, err := walk(root, everything, skip, maxTree, stampState)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// ChangedSince returns, for each record, the files under root added,
// deleted, edited, touched or unreadable since, sorted; nil ("unknown",
// never "nothing changed") when it holds no tree or none can be listed now.
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
