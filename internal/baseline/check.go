package baseline

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/pattern"
)

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
	var v Verdict
	if c.Err != nil {
		return Verdict{Problem: "could not judge: " + c.Err.Error()}
	}
	if len(c.In) > 0 && c.Set == nil { // a bug: listing no files would pass added_lacks
		return Verdict{Problem: "could not judge: its in patterns were not compiled"}
	}
	var problems []string
	set := c.Set
	if len(c.In) == 0 {
		set = nil // no files to list
	}
	now := read(root, c.Changed, set, skip, 1<<62)
	for _, rec := range records {
		fails, probs := c.against(rec, now)
		v.Fails, problems = appendNew(v.Fails, fails), appendNew(problems, probs)
	}
	if len(records) == 0 {
		problems = append(problems, noRecord)
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
		f, prob := changed(p, s, n.Changed[p])
		if f != "" {
			fails = append(fails, f)
		}
		if prob != "" {
			problems = append(problems, prob)
		}
	}
	if len(c.In) > 0 {
		f, probs := c.added(s, n)
		fails, problems = append(fails, f...), append(problems, probs...)
	}
	return fails, problems
}

// changed judges one changed path; deleting the file is no edit.
func changed(p string, s *Snapshot, now State) (fail, problem string) {
	was, ok := s.Changed[p]
	switch {
	case !ok:
		return "", p + " was not recorded when the prompt was armed (mappings.toml changed since)"
	case was.Err != "":
		return "", fmt.Sprintf("%s: %s when the prompt was armed", p, was.Err)
	case now.Err != "":
		return "", fmt.Sprintf("%s: %s", p, now.Err)
	case !was.Exists && !now.Exists:
		return p + ": no such file (nor was there when the prompt was armed)", ""
	case !now.Exists:
		return p + ": deleted since the prompt was armed; changed wants it edited", ""
	case was.Exists && was.Sum == now.Sum:
		return p + ": unchanged since the prompt was armed", ""
	}
	return "", ""
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

var errDiffCost = errors.New("the files differ too much to diff")

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

// AddedLines returns the indexes of b's lines a shortest edit script from a
// inserts: Myers' diff in linear space, one-sided lines set aside first.
func AddedLines(a, b []string) ([]int, error) {
	ids, inB := map[string]int{}, make(map[string]bool, len(b)) // a's lines numbered
	for _, l := range b {
		inB[l] = true
	}
	var fa, fb, bAt []int // the lines common to both, as ids; where each of fb stands in b
	for _, l := range a {
		if _, ok := ids[l]; !ok {
			ids[l] = len(ids)
		}
		if inB[l] {
			fa = append(fa, ids[l])
		}
	}
	d := differ{a: fa, added: make([]bool, len(b))}
	for i, l := range b {
		n, inA := ids[l]
		if inA {
			fb, bAt = append(fb, n), append(bAt, i)
		}
		d.added[i] = !inA
	}
	d.b, d.bAt, d.ra, d.rb = fb, bAt, slices.Clone(fa), slices.Clone(fb)
	slices.Reverse(d.ra)
	slices.Reverse(d.rb)
	if d.compare(0, len(fa), 0, len(fb)); d.err != nil {
		return nil, d.err
	}
	var added []int
	for i, yes := range d.added {
		if yes {
			added = append(added, i)
		}
	}
	return added, nil
}

type differ struct {
	a, b, bAt []int  // bAt: where each of b stands in the caller's b
	ra, rb    []int  // a and b reversed
	added     []bool // of the caller's b
	vf, vb    []int
	cost      int
	err       error
}

func (d *differ) compare(aLo, aHi, bLo, bHi int) {
	for aLo < aHi && bLo < bHi && d.a[aLo] == d.b[bLo] {
		aLo, bLo = aLo+1, bLo+1
	}
	for aLo < aHi && bLo < bHi && d.a[aHi-1] == d.b[bHi-1] {
		aHi, bHi = aHi-1, bHi-1
	}
	switch {
	case d.err != nil:
		return
	case aLo == aHi:
		for j := bLo; j < bHi; j++ {
			d.added[d.bAt[j]] = true
		}
		return
	case bLo == bHi:
		return // deletions only
	}
	x, y, u, v := d.middle(aLo, aHi, bLo, bHi)
	if d.err != nil {
		return
	}
	d.compare(aLo, x, bLo, y)
	d.compare(u, aHi, v, bHi)
}

// middle finds the middle snake (x, y)-(u, v) of a[aLo:aHi] against
// b[bLo:bHi] (Myers 1986, 4b), searching in reverse on ra and rb.
func (d *differ) middle(aLo, aHi, bLo, bHi int) (x, y, u, v int) {
	n, m := aHi-aLo, bHi-bLo
	delta := n - m
	odd := delta&1 != 0
	limit := (n+m+1)/2 + 1
	if need := 2*limit + 2; len(d.vf) < need {
		d.vf, d.vb = make([]int, need), make([]int, need)
	}
	off := limit
	vf, vb := d.vf, d.vb
	vf[off+1], vb[off+1] = 0, 0
	fa, fb := d.a[aLo:aHi], d.b[bLo:bHi]
	ra, rb := d.ra[len(d.a)-aHi:len(d.a)-aLo], d.rb[len(d.b)-bHi:len(d.b)-bLo]
	for D := 0; D <= limit; D++ {
		if x0, y0, x, y, met := snakes(fa, fb, vf, vb, off, D, delta, D-1, odd); met {
			return aLo + x0, bLo + y0, aLo + x, bLo + y
		}
		if x0, y0, x, y, met := snakes(ra, rb, vb, vf, off, D, delta, D, !odd); met {
			return aHi - x, bHi - y, aHi - x0, bHi - y0
		}
		if d.cost += 2*D + 2; d.cost > maxDiffCost {
			d.err = errDiffCost
			return
		}
	}
	d.err = errors.New("diff: no middle snake") // unreachable for a correct search
	return
}

// snakes is step D of one direction's search, v the furthest x on each
// diagonal; when meet, the first snake reaching the other's path (up to done).
func snakes(a, b, v, other []int, off, D, delta, done int, meet bool) (x0, y0, x, y int, met bool) {
	n, m := len(a), len(b)
	for k := -D; k <= D; k += 2 {
		if k == -D || k != D && v[off+k-1] < v[off+k+1] {
			x = v[off+k+1]
		} else {
			x = v[off+k-1] + 1
		}
		y = x - k
		x0, y0 = x, y
		for x < n && y < m && a[x] == b[y] {
			x, y = x+1, y+1
		}
		v[off+k] = x
		if c := delta - k; meet && c >= -done && c <= done && x+other[off+c] >= n {
			return x0, y0, x, y, true
		}
	}
	return 0, 0, 0, 0, false
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
