package baseline

import (
	"path/filepath"
	"slices"

	"github.com/stopgate/stopgate/internal/pattern"
)

// everything selects every file, for the record of the whole tree.
var everything, _ = pattern.Compile([]string{"*"})

// tree is the state of every file under root but .git and the dirs in
// skip, content hashes only; nil when the tree could not be listed.
func tree(root string, skip []string) (map[string]State, error) {
	paths, links, err := walk(root, everything, skip)
	if err != nil {
		return nil, err
	}
	t := make(map[string]State, len(paths)+len(links))
	for _, p := range paths {
		t[p] = stateOf(filepath.Join(root, filepath.FromSlash(p)), nil)
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
