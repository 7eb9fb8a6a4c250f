package baseline

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// maxDiffCost bounds one file's diff, in steps of the search: a
// pathological pair is "could not judge", never a hung gate.
const maxDiffCost = 50_000_000

var errDiffCost = errors.New("the files differ too much to diff")

// splitLines splits text into lines without their breaks; a final break
// ends the last line.
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

// AddedLines returns the indexes of the lines of b that a shortest edit
// script from a to b inserts, in order: Myers' diff in linear space, the
// lines found on one side only set aside first (in no common subsequence).
func AddedLines(a, b []string) ([]int, error) {
	ids := map[string]int{} // the lines of a, numbered
	for _, l := range a {
		if _, ok := ids[l]; !ok {
			ids[l] = len(ids)
		}
	}
	inB := make(map[string]bool, len(b))
	for _, l := range b {
		inB[l] = true
	}
	var fa, fb, bAt []int // the lines common to both, as ids; where each of fb stands in b
	for _, l := range a {
		if inB[l] {
			fa = append(fa, ids[l])
		}
	}
	for i, l := range b {
		if n, ok := ids[l]; ok {
			fb, bAt = append(fb, n), append(bAt, i)
		}
	}
	d := differ{a: fa, b: fb, ra: slices.Clone(fa), rb: slices.Clone(fb)}
	slices.Reverse(d.ra)
	slices.Reverse(d.rb)
	d.compare(0, len(fa), 0, len(fb))
	if d.err != nil {
		return nil, d.err
	}
	ins := map[int]bool{}
	for _, j := range d.inserted {
		ins[bAt[j]] = true
	}
	var added []int
	for i, l := range b {
		if _, inA := ids[l]; !inA || ins[i] {
			added = append(added, i)
		}
	}
	return added, nil
}

type differ struct {
	a, b     []int
	ra, rb   []int // a and b reversed
	inserted []int // indexes of b
	vf, vb   []int
	cost     int
	err      error
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
			d.inserted = append(d.inserted, j)
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

// middle finds the middle snake of a[aLo:aHi] against b[bLo:bHi], from
// (x, y) to (u, v) (Myers 1986, 4b); the ends differ (compare trimmed
// them), so each half is smaller. The reverse search runs on ra and rb.
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

// snakes is step D of one direction's search: v holds the furthest x on
// each diagonal k. When meet, it reports the first snake, (x0, y0) to
// (x, y), reaching the other direction's path (searched up to step done).
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

// LineDiff is the change from old to new for a reader (a judge's model):
// each line removed as "-N: text", then each added as "+N: text".
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

// Armed returns how the file rel was when the prompt was armed, from the
// first of recs that knows: State{} when a recorded tree lacked it.
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
