package config

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/baseline"
	"github.com/stopgate/stopgate/internal/cheats"
	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/shell"
)

// Diff is a validator's checks on what changed since arming (baseline).
type Diff struct {
	Changed      []string `toml:"changed"`       // files whose content must differ
	AddedLacks   string   `toml:"added_lacks"`   // no line added in the files of In may match
	AddedMatches string   `toml:"added_matches"` // some line added in the files of In must match
	In           []string `toml:"in"`            // gitignore-style patterns (package pattern)
	Cheats       bool     `toml:"cheats"`        // no cheat added in the files of In, else of cheats.In
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

// diff reads and checks the diff keys into out: false if there are none.
func (p *parser) diff(name string, out *Diff, rd ValidatorKeys) bool {
	key, cheats := "validators."+name, p.has(name, "cheats")
	*out = rd.Diff
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
	case cheats && !rd.Cheats:
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
	return out.IsDiff() || rd.In != nil || cheats
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

// WantOf is what detect records when it arms m: its validators' wants.
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

// Inputs are what a verdict depends on beyond the agent's work, path to
// SHA-256: a check passing because its script changed must not be silent.
type Inputs map[string]string

// maxInputFile bounds how much of a program a hook hashes.
const maxInputFile = 4 << 20

// InputsOf returns the config's key and each run validator's RunInputs.
func InputsOf(root, file string, key [sha256.Size]byte, m *Mapping, validator func(string) (*Validator, error)) (Inputs, error) {
	in := Inputs{project.Display(root, file): hex.EncodeToString(key[:])}
	for _, name := range m.Validators {
		v, err := validator(name)
		if err != nil {
			return nil, err
		}
		if v != nil && v.Run != "" {
			RunInputs(in, v.Run, root, maxInputFile)
		}
	}
	return in, nil
}

// RunInputs adds to in the files inside root that run executes or sources
// (shell.Files) or a plain word names, hashed up to limit bytes; unread is
// an executed file it could not hash.
func RunInputs(in Inputs, run, root string, limit int64) (unread bool) {
	var paths []string
	for _, f := range shell.Files(run, root) {
		paths = append(paths, f.Path)
	}
	executed := len(paths)
	for i, path := range append(paths, strings.Fields(run)...) {
		if r, inside := project.Rel(root, path); inside {
			if sum, ok := digest(filepath.Join(root, r), limit); ok {
				in[r] = sum
			} else if i < executed {
				unread = true
			}
		}
	}
	return unread
}

// Changed returns the paths of in whose content changed or is gone.
func (in Inputs) Changed(root string, configKey [sha256.Size]byte, configFile string) []string {
	var changed []string
	cfg := project.Display(root, configFile)
	for path, was := range in {
		now := ""
		if path == cfg {
			now = hex.EncodeToString(configKey[:])
		} else if sum, ok := digest(filepath.Join(root, path), maxInputFile); ok {
			now = sum
		}
		if now != was {
			changed = append(changed, path)
		}
	}
	return changed
}

// digest is the SHA-256 of a regular file's first limit bytes.
func digest(path string, limit int64) (string, bool) {
	f, _, err := regular.Open(path) // a named pipe holds no hook
	if err != nil {
		return "", false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, limit)); err != nil {
		return "", false
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// Key is the SHA-256 of the config's text.
func (c *Config) Key() [sha256.Size]byte { return c.key }

// ChangedSince returns the paths of in changed after t by ctime (`touch -d` cannot move it), or gone.
func (in Inputs) ChangedSince(root string, t time.Time) []string {
	var changed []string
	for path := range in {
		file := path
		if !filepath.IsAbs(file) {
			file = filepath.Join(root, file)
		}
		fi, err := os.Stat(file)
		if err != nil || regular.StampOf(fi).Ctime > t.UnixNano() {
			changed = append(changed, path)
		}
	}
	return changed
}
