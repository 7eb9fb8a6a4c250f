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

// Verdict is a judged check: Fails are what the agent must fix, one line
// each; Problem says why the check could not judge.
type Verdict struct {
	Fails   []string
	Problem string
}

// Judge compares the files under root now with each record (one per
// armed prompt): the check passes only if it passes against every one.
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

// changes are the files of n that differ from s, sorted, and for a Scan
// those deleted since; one that cannot be judged is a problem.
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
