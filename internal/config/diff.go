package config

import (
	"cmp"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/baseline"
	"github.com/stopgate/stopgate/internal/cheats"
	"github.com/stopgate/stopgate/internal/pattern"
)

// Diff is a validator's checks on what the agent changed since the prompt
// was armed (package baseline).
type Diff struct {
	Changed      []string // files whose content must differ
	AddedLacks   string   // no line added in the files of In may match
	AddedMatches string   // some line added in the files of In must match
	In           []string // gitignore-style patterns (package pattern)
	Cheats       bool     // no cheat added in the files of In, else of cheats.In
}

// IsDiff reports whether the validator is a diff check.
func (d Diff) IsDiff() bool {
	return len(d.Changed) > 0 || d.AddedLacks != "" || d.AddedMatches != "" || d.Cheats
}

// in is the files the checks of In look at.
func (d Diff) in() []string {
	if d.Cheats && len(d.In) == 0 {
		return cheats.In
	}
	return d.In
}

// wants says what the diff checks want, since the prompt was armed.
func (d Diff) wants() string {
	var parts []string
	if len(d.Changed) > 0 {
		parts = append(parts, strings.Join(d.Changed, ", ")+" must change")
	}
	in := strings.Join(d.In, ", ")
	if d.Cheats {
		in = cmp.Or(in, "the sources, test configs, scripts and CI")
		parts = append(parts, "no cheat added in "+in+": tests deleted or skipped, assertions removed, tests excluded, suppressions, --no-verify, secrets")
	}
	for _, added := range [][2]string{{"no line added in %s may match %s", d.AddedLacks}, {"a line added in %s must match %s", d.AddedMatches}} {
		if added[1] != "" {
			parts = append(parts, fmt.Sprintf(added[0], in, added[1]))
		}
	}
	return strings.Join(parts, "; ") + " (since this prompt was read)"
}

// Want is what detect records for these checks when the prompt is armed.
func (d Diff) Want() baseline.Want {
	if len(d.AddedLacks)+len(d.AddedMatches) == 0 && !d.Cheats {
		return baseline.Want{Changed: d.Changed}
	}
	return baseline.Want{Changed: d.Changed, In: d.in()}
}

// diff reads and checks a validator's diff keys into out, and reports
// whether it has any.
func (p *parser) diff(key string, out *Diff, rd rawValidator) bool {
	*out = Diff{Changed: rd.Changed, AddedLacks: rd.AddedLacks, AddedMatches: rd.AddedMatches, In: rd.In, Cheats: rd.Cheats != nil && *rd.Cheats}
	for _, c := range rd.Changed {
		if msg := outsidePath(c); msg != "" {
			p.add(key+".changed", fmt.Sprintf("%q %s", c, msg), `name files relative to the project root, like "CHANGELOG.md" or "docs/api.md"`)
		}
	}
	const hint = `the syntax is Go's RE2; in single quotes TOML keeps backslashes as written: 't\.Skip\('`
	p.regex(key+".added_lacks", rd.AddedLacks, hint)
	p.regex(key+".added_matches", rd.AddedMatches, hint)
	added := rd.AddedLacks != "" || rd.AddedMatches != ""
	switch {
	case rd.Cheats != nil && !*rd.Cheats:
		p.add(key+".cheats", "false checks nothing", "write cheats = true, or delete the key")
	case out.Cheats && (added || len(rd.Changed) > 0):
		p.add(key, "has cheats and another diff check", "a validator is one kind: split it into two validators")
	case out.Cheats:
	case added && len(rd.In) == 0:
		p.add(key, "added_lacks and added_matches need in", `in = ["**/*_test.go"] names the files whose added lines are checked`)
	case !added && rd.In != nil:
		p.add(key+".in", "in applies to added_lacks and added_matches only", "add one of them, or delete in")
	}
	for _, g := range rd.In {
		if err := pattern.Check(g); err != nil {
			p.add(key+".in", fmt.Sprintf("%q %v", g, err), `gitignore-style globs: "**/*_test.go", "tests/", "*.py"`)
		}
	}
	return out.IsDiff() || rd.In != nil || rd.Cheats != nil
}

// outsidePath says why c is not a clean path inside the project, or "".
func outsidePath(c string) string {
	switch {
	case strings.TrimSpace(c) == "":
		return "is empty"
	case strings.HasPrefix(c, "/") || strings.Contains(c, "\\") || len(c) > 1 && c[1] == ':':
		return "is absolute: it must be inside the project"
	case c == ".." || strings.HasPrefix(c, "../") || strings.Contains(c, "/../") || strings.HasSuffix(c, "/.."):
		return "reaches outside the project"
	case path.Clean(c) != c:
		return fmt.Sprintf("is not a clean path (write %q)", path.Clean(c))
	}
	return ""
}

// WantOf is what detect records when it arms m: the union of its
// validators' diff checks' wants.
func WantOf(m *Mapping, validator func(string) (*Validator, error)) (baseline.Want, error) {
	var w baseline.Want
	for _, name := range m.Validators {
		v, err := validator(name)
		if err != nil {
			return w, err
		}
		if v == nil {
			continue
		}
		vw := v.Diff.Want()
		if v.Judge != nil && slices.Contains(v.Judge.Evidence, EvidenceChanged) {
			vw.In = union(vw.In, JudgeIn) // its diff since arming needs the text as it was
		}
		w.Changed = union(w.Changed, vw.Changed)
		w.In = union(w.In, vw.In)
	}
	return w, nil
}

func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// Check compiles the diff checks for the gate; one that fails judges nothing.
func (d Diff) Check() *baseline.Check {
	set, err := pattern.Compile(d.in())
	c := &baseline.Check{Changed: d.Changed, In: d.in(), Set: set}
	if d.Cheats {
		c.Scan = cheats.Scan
	}
	if err != nil {
		c.Err = fmt.Errorf("in: %w", err)
	}
	if d.AddedLacks != "" {
		if c.Lacks, err = regexp.Compile(d.AddedLacks); err != nil {
			c.Err = err
		}
	}
	if d.AddedMatches != "" {
		if c.Matches, err = regexp.Compile(d.AddedMatches); err != nil {
			c.Err = err
		}
	}
	return c
}
