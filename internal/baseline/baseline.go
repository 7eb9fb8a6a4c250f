// Package baseline records, at arming, the files a prompt's diff checks name, and judges at the stop what changed since
// (docs/config.md); what a record cannot say is "could not judge", never a pass.
package baseline

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/regular"
)

// Version is the record's format: 2 chooses in's files by git's rules; a record of 1, judged by them, could pass an added file it never held.
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

// linkedDir is a link to a folder in may enter: a finding, not an empty folder (tests/ swapped for a link to a skipping copy read as deleted).
const linkedDir = "a symbolic link to a folder, which diff checks do not follow (put the folder itself there, or leave the link out of in with a ! pattern)"

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
	if err != nil {
		return failed(err)
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
		return failed(err)
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
	paths, linked, err := Walk(context.Background(), root, skip, set)
	if len(paths) > most {
		return nil, fmt.Errorf("more than %d files", most)
	}
	m := map[string]State{}
	for _, rel := range linked { // not followed (a loop, outside the root): a finding
		m[rel] = State{Err: linkedDir}
	}
	for _, p := range paths {
		m[p] = state(filepath.Join(root, filepath.FromSlash(p)))
	}
	return m, err
}

// Walk lists, sorted and slash-separated, the files under root that set (nil: every file) selects, but in .git and skip (absolute) folders, and apart
// the links to folders set may enter. It lists on past an unreadable folder, and returns the first such error; ctx done stops it.
func Walk(ctx context.Context, root string, skip []string, set *pattern.Set) (files, linkedDirs []string, err error) {
	set = cmp.Or(set, everything())
	done := filepath.WalkDir(root, func(path string, de fs.DirEntry, werr error) error {
		if werr != nil {
			err = cmp.Or(err, werr)
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		switch {
		case de.IsDir() && path != root && (de.Name() == ".git" || slices.Contains(skip, path) || !set.MayEnter(rel)):
			return filepath.SkipDir
		case de.IsDir():
		case de.Type()&fs.ModeSymlink != 0 && isDir(path):
			if set.MayEnter(rel) {
				linkedDirs = append(linkedDirs, rel)
			}
		case set.Match(rel):
			files = append(files, rel)
		}
		return ctx.Err()
	})
	slices.Sort(files)
	return files, linkedDirs, cmp.Or(done, err)
}

func isDir(path string) bool {
	info, err := os.Stat(path)
	return err == nil && info.IsDir()
}

// failed is the state of a file err kept from being read: none when it does not exist; the path dropped (the messages name it).
func failed(err error) State {
	var pe *fs.PathError
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return State{}
	case errors.As(err, &pe):
		err = pe.Err
	}
	return State{Err: err.Error()}
}

// everything selects every file, for the record of the whole tree.
var everything = sync.OnceValue(func() *pattern.Set {
	s, _ := pattern.Compile([]string{"*"})
	return s
})

// maxTree bounds the record of the whole tree: past it none is taken.
const maxTree = 200_000

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
	if err != nil {
		return failed(err)
	}
	return State{Exists: true, Sum: regular.StampOf(fi).String()}
}

// Check is a validator's diff checks, compiled.
type Check struct {
	Changed []string     // paths that must differ from the record
	In      []string     // patterns of the files added_lacks and added_matches look at
	Set     *pattern.Set // In, compiled
	Lacks   *regexp.Regexp
	Matches *regexp.Regexp
	Scan    func([]Change) []string // judges In's changes in place of Lacks and Matches (cheats)
	Err     error                   // why it could not be compiled; it judges nothing then
}

// Verdict is a judged check: what the agent must fix, one line each, or why it could not judge.
type Verdict struct {
	Fails   []string
	Problem string
}

// Judge compares the files under root with each armed prompt's record: it passes only against every one.
func (c *Check) Judge(root string, records []string, skip []string) Verdict {
	switch {
	case c.Err != nil:
		return Verdict{Problem: "could not judge: " + c.Err.Error()}
	case len(c.In) > 0 && c.Set == nil: // a bug: listing no files would pass added_lacks
		return Verdict{Problem: "could not judge: its in patterns were not compiled"}
	}
	now := read(root, c.Changed, c.In, c.Set, skip, 1<<62)
	var v Verdict
	var problems []string
	if len(records) == 0 {
		problems = []string{noRecord}
	}
	for _, rec := range records {
		fails, probs := c.against(rec, now)
		v.Fails, problems = appendNew(v.Fails, fails), appendNew(problems, probs)
	}
	if len(problems) > 0 {
		v.Problem = "could not judge: " + strings.Join(problems, "; ")
	}
	return v
}

// appendNew appends to the strings of add it lacks.
func appendNew(to, add []string) []string {
	for _, s := range add {
		if !slices.Contains(to, s) {
			to = append(to, s)
		}
	}
	return to
}

const noRecord = "nothing was recorded when the prompt was armed (armed by an older stopgate, rebuilt from the transcript, run by gate run, or the record is gone)"

func (c *Check) against(record string, n *Snapshot) (fails, problems []string) {
	s, err := Load(record)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, []string{noRecord}
	case err != nil:
		return nil, []string{"the record taken when the prompt was armed is unreadable (" + err.Error() + ")"}
	}
	for _, p := range c.Changed {
		if msg, problem := changed(p, s, n.Changed[p]); problem {
			problems = append(problems, msg)
		} else if msg != "" {
			fails = append(fails, msg)
		}
	}
	if len(c.In) > 0 {
		f, probs := c.added(s, n)
		fails, problems = append(fails, f...), append(problems, probs...)
	}
	return fails, problems
}

// changed judges one changed path, a fail or a problem; deleting the file is no edit.
func changed(p string, s *Snapshot, now State) (msg string, problem bool) {
	was, ok := s.Changed[p]
	switch {
	case !ok:
		return p + " was not recorded when the prompt was armed (mappings.toml changed since)", true
	case was.Err != "":
		return fmt.Sprintf("%s: %s when the prompt was armed", p, was.Err), true
	case now.Err != "":
		return fmt.Sprintf("%s: %s", p, now.Err), true
	case !was.Exists && !now.Exists:
		return p + ": no such file (nor was there when the prompt was armed)", false
	case !now.Exists:
		return p + ": deleted since the prompt was armed; changed wants it edited", false
	case was.Exists && was.Sum == now.Sum:
		return p + ": unchanged since the prompt was armed", false
	}
	return "", false
}

// Change is a file of In that differs from the record, its text then and now.
type Change struct {
	Path            string
	Was, Now        []byte
	Existed, Exists bool
}

// added judges the lines added since s in the files of c.In, or hands them to c.Scan.
func (c *Check) added(s *Snapshot, n *Snapshot) (fails, problems []string) {
	for _, p := range positive(c.In) {
		if !slices.Contains(s.In, p) {
			problems = append(problems, fmt.Sprintf("files matching %s were not recorded when the prompt was armed (mappings.toml changed since)", p))
		}
	}
	if s.WalkErr != "" {
		problems = append(problems, "listing the files when the prompt was armed: "+s.WalkErr)
	}
	if n.WalkErr != "" {
		problems = append(problems, "listing the files: "+n.WalkErr)
	}
	if len(problems) > 0 {
		return nil, problems
	}
	changes, problems := c.changes(s, n)
	if c.Scan != nil {
		return c.Scan(changes), problems
	}
	found := false
	for _, ch := range changes {
		lines := splitLines(ch.Now)
		idx, err := AddedLines(splitLines(ch.Was), lines)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", ch.Path, err))
			continue
		}
		for _, i := range idx {
			if c.Lacks != nil && c.Lacks.MatchString(lines[i]) {
				fails = append(fails, fmt.Sprintf("%s:%d: added line matches %s: %s", ch.Path, i+1, c.Lacks, cli.Clip(strings.TrimSpace(lines[i]), 160, "…")))
			}
			if c.Matches != nil && c.Matches.MatchString(lines[i]) {
				found = true
			}
		}
	}
	if c.Matches != nil && !found && len(problems) == 0 {
		fails = append(fails, fmt.Sprintf("no line added since the prompt was armed in %s matches %s", strings.Join(c.In, ", "), c.Matches))
	}
	return fails, problems
}

// changes are the files of n that differ from s (for a Scan, the deleted too), sorted, or problems.
func (c *Check) changes(s, n *Snapshot) (out []Change, problems []string) {
	paths := slices.Collect(maps.Keys(n.Files))
	for p := range s.Files {
		if _, ok := n.Files[p]; !ok && c.Scan != nil && c.Set.Match(p) {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		cur, exists := n.Files[p]
		was, existed := s.Files[p]
		// A link to nothing is no file: deleted, or added when it was one.
		isFile, wasFile := exists && cur.Exists, existed && was.Exists
		switch {
		case cur.Err != "":
			problems = append(problems, fmt.Sprintf("%s: %s", p, cur.Err))
		case existed && was.Err != "":
			problems = append(problems, fmt.Sprintf("%s: %s when the prompt was armed", p, was.Err))
		case existed && was.Sum == cur.Sum, !isFile && !wasFile:
		case wasFile && !was.Kept:
			problems = append(problems, fmt.Sprintf("%s changed and was too large to record when the prompt was armed (over %d MiB, or past the record's %d MiB)", p, maxText>>20, maxTotal>>20))
		case isFile && !cur.Kept:
			problems = append(problems, fmt.Sprintf("%s is over %d MiB", p, maxText>>20))
		default:
			out = append(out, Change{Path: p, Was: was.Text, Now: cur.Text, Existed: wasFile, Exists: isFile})
		}
	}
	return out, problems
}

// maxDiffCost bounds one file's diff, in search steps: never a hung gate.
const maxDiffCost = 50_000_000

// splitLines splits text into lines without their breaks.
func splitLines(text []byte) []string {
	if len(text) == 0 {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// AddedLines returns the indexes of b's lines a shortest edit script from a inserts: Myers' diff in linear space, one-sided lines set aside first.
func AddedLines(a, b []string) ([]int, error) {
	inB := make(map[string]bool, len(b))
	for _, l := range b {
		inB[l] = true
	}
	var d differ
	ids := map[string]int{} // the lines common to both, numbered
	for _, l := range a {
		if !inB[l] {
			continue
		}
		id, ok := ids[l]
		if !ok {
			id, ids[l] = len(ids), len(ids)
		}
		d.a = append(d.a, id)
	}
	var added []int
	for i, l := range b {
		if id, ok := ids[l]; ok {
			d.b, d.at = append(d.b, id), append(d.at, i)
		} else {
			added = append(added, i)
		}
	}
	d.ra, d.rb = slices.Clone(d.a), slices.Clone(d.b)
	slices.Reverse(d.ra)
	slices.Reverse(d.rb)
	if err := d.compare(0, len(d.a), 0, len(d.b)); err != nil {
		return nil, err
	}
	added = append(added, d.added...)
	slices.Sort(added)
	return added, nil
}

type differ struct {
	a, b, at []int // the common lines as ids; where each of b stands in the caller's b
	ra, rb   []int // a and b reversed
	added    []int // of the caller's b
	vf, vb   []int
	cost     int
}

// compare adds what b[bLo:bHi] inserts against a[aLo:aHi], split at a point of a shortest path.
func (d *differ) compare(aLo, aHi, bLo, bHi int) error {
	for aLo < aHi && bLo < bHi && d.a[aLo] == d.b[bLo] {
		aLo, bLo = aLo+1, bLo+1
	}
	for aLo < aHi && bLo < bHi && d.a[aHi-1] == d.b[bHi-1] {
		aHi, bHi = aHi-1, bHi-1
	}
	switch {
	case aLo == aHi:
		d.added = append(d.added, d.at[bLo:bHi]...)
		return nil
	case bLo == bHi:
		return nil // deletions only
	}
	x, y, err := d.middle(aLo, aHi, bLo, bHi)
	if err == nil {
		err = d.compare(aLo, x, bLo, y)
	}
	if err == nil {
		err = d.compare(x, aHi, y, bHi)
	}
	return err
}

// middle is where the forward and the backward searches of a[aLo:aHi] against b[bLo:bHi] meet (Myers 1986, 4b): a point of a shortest path.
func (d *differ) middle(aLo, aHi, bLo, bHi int) (x, y int, err error) {
	n, m := aHi-aLo, bHi-bLo
	delta, off := n-m, (n+m+1)/2+1
	if len(d.vf) < 2*off+2 {
		d.vf, d.vb = make([]int, 2*off+2), make([]int, 2*off+2)
	}
	d.vf[off+1], d.vb[off+1] = 0, 0
	ra, rb := d.ra[len(d.a)-aHi:len(d.a)-aLo], d.rb[len(d.b)-bHi:len(d.b)-bLo]
	for D := 0; D < off; D++ {
		if x, y, met := snakes(d.a[aLo:aHi], d.b[bLo:bHi], d.vf, d.vb, off, D, delta, D-1, delta&1 != 0); met {
			return aLo + x, bLo + y, nil
		}
		if x, y, met := snakes(ra, rb, d.vb, d.vf, off, D, delta, D, delta&1 == 0); met {
			return aHi - x, bHi - y, nil
		}
		if d.cost += 2*D + 2; d.cost > maxDiffCost {
			return 0, 0, errors.New("the files differ too much to diff")
		}
	}
	return 0, 0, errors.New("diff: no middle snake") // unreachable for a correct search
}

// snakes is step D of one direction's search, v the furthest x on each diagonal; when meet, the end of the first snake reaching the other's path (up to done).
func snakes(a, b, v, other []int, off, D, delta, done int, meet bool) (x, y int, met bool) {
	n, m := len(a), len(b)
	for k := -D; k <= D; k += 2 {
		if k == -D || k != D && v[off+k-1] < v[off+k+1] {
			x = v[off+k+1]
		} else {
			x = v[off+k-1] + 1
		}
		y = x - k
		for x < n && y < m && a[x] == b[y] {
			x, y = x+1, y+1
		}
		v[off+k] = x
		if c := delta - k; meet && c >= -done && c <= done && x+other[off+c] >= n {
			return x, y, true
		}
	}
	return 0, 0, false
}

// LineDiff is the change from old to new for a judge: "-N: text" removed, then "+N: text" added.
func LineDiff(old, new []byte) (string, error) {
	a, b := splitLines(old), splitLines(new)
	removed, err := AddedLines(b, a)
	if err != nil {
		return "", err
	}
	added, err := AddedLines(a, b)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	for _, i := range removed {
		fmt.Fprintf(&out, "-%d: %s\n", i+1, a[i])
	}
	for _, i := range added {
		fmt.Fprintf(&out, "+%d: %s\n", i+1, b[i])
	}
	return out.String(), nil
}

// Armed returns how rel was at arming, from the first of recs that knows (State{}: not there).
func Armed(recs []*Snapshot, rel string) (State, bool) {
	for _, s := range recs {
		if st, ok := s.Files[rel]; ok {
			return st, true
		}
		if st, ok := s.Changed[rel]; ok {
			return st, true
		}
		if _, had := s.Tree[rel]; s.Tree != nil && !had {
			return State{}, true // the whole tree was listed, and it was not there
		}
	}
	return State{}, false
}
