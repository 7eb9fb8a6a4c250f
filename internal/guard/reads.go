package guard

import (
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/stopgate/stopgate/internal/shell"
)

// A readRule says which operands a program reads, beside rules (which it
// writes): the same dry run resolves both.
type readRule struct {
	short    string   // option letters that take a value (-n 5, -n5)
	long     []string // long options that take a value
	script   bool     // the first operand is a script or a pattern, not a file
	scriptBy []string // options that supply the script instead (letters and long names)
	edits    []string // options that make it an edit in place: nothing is read, the write rules judge it
}

// readRules are the programs whose file operands a command reads.
var readRules = sync.OnceValue(func() map[string]readRule {
	readRules := map[string]readRule{}
	for _, p := range []string{"cat", "tac", "less", "more", "most", "bat", "batcat", "view", "strings", "rev"} {
		readRules[p] = readRule{}
	}
	for _, p := range []string{"head", "tail"} {
		readRules[p] = readRule{short: "nc", long: []string{"lines", "bytes"}}
	}
	readRules["nl"] = readRule{short: "bdfhilnsvw"}
	readRules["pr"] = readRule{short: "hlNow"}
	readRules["fold"] = readRule{short: "w"}
	readRules["od"] = readRule{short: "AjNtw"}
	readRules["xxd"] = readRule{short: "cglos"}
	readRules["hexdump"] = readRule{short: "enfs"}
	readRules["sed"] = readRule{short: "efl", long: []string{"expression", "file", "line-length"}, script: true,
		scriptBy: []string{"e", "f", "expression", "file"}, edits: []string{"i", "in-place"}}
	for _, p := range []string{"awk", "gawk", "mawk", "nawk"} {
		readRules[p] = readRule{short: "fvFiEl", long: []string{"file", "assign", "field-separator", "include", "exec", "load", "source"},
			script: true, scriptBy: []string{"f", "file", "E", "exec", "source"}}
	}
	grep := readRule{short: "efmABCd", long: []string{"regexp", "file", "max-count", "after-context", "before-context", "context"},
		script: true, scriptBy: []string{"e", "f", "regexp", "file"}}
	for _, p := range []string{"grep", "egrep", "fgrep"} {
		readRules[p] = grep
	}
	rg := grep
	rg.short += "gtTM"
	rg.long = append([]string{"glob", "type", "type-not", "max-columns"}, grep.long...)
	readRules["rg"] = rg
	return readRules
})

// operands returns the files a call of a program with rule r reads.
func (r readRule) operands(args []word) []word {
	o := parseOpts(args, r.short, r.long...)
	if o.has(r.edits...) {
		return nil
	}
	ops := o.ops
	if r.script && !o.has(r.scriptBy...) && len(ops) > 0 {
		ops = ops[1:]
	}
	return ops
}

// readsOf records what a program call reads: its read rule's operands, or
// for find the files it hands an -exec of a reading program.
func (a *analyzer) readsOf(name string, args []word) {
	if name == "find" {
		a.findReads(args)
		return
	}
	if r, ok := readRules()[name]; ok {
		for _, w := range r.operands(args) {
			// {} is recorded as its files are known (findReads, xargs).
			if !w.unknown && !strings.Contains(w.text, "{}") {
				a.d.read(a, w.text)
			}
		}
	}
}

// read records that the file named t was read, from the analyzer's cwd.
func (d *dryRun) read(a *analyzer, t string) {
	if !d.recording || t == "" || t == "-" || strings.Contains(t, unknownMark) || a.cwd == "" && !strings.HasPrefix(t, "/") {
		return
	}
	p := shell.Abs(t, a.cwd)
	d.mu.Lock()
	if !d.readSeen[p] {
		d.readSeen[p] = true
		d.reads = append(d.reads, p)
	}
	d.mu.Unlock()
}

// maxFound bounds the files one find of a read walks.
const maxFound = 2000

// findReads records the files find hands an -exec of a reading program:
// the regular files under its start paths its -name and -path tests pass
// (all of them with -o or a negation).
func (a *analyzer) findReads(args []word) {
	starts, expr := findArgs(args)
	reads, tests, all := false, []func(p string) bool{}, false
	for j := 0; j < len(expr); j++ {
		t := expr[j].text
		switch t {
		case "-exec", "-execdir", "-ok", "-okdir":
			sub, k := findExec(expr, j)
			if n, ok := shell.Unwrap(texts(sub)); ok && n < len(sub) && !sub[n].unknown {
				_, ok := readRules()[path.Base(sub[n].text)]
				reads = reads || ok
			}
			j = k
		case "-o", "-or", "!", "-not":
			all = true
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename":
			if j+1 < len(expr) {
				pat, fold, base := expr[j+1].text, t[1] == 'i', t == "-name" || t == "-iname"
				if fold {
					pat = strings.ToLower(pat)
				}
				tests = append(tests, func(p string) bool {
					if base {
						p = path.Base(p)
					}
					if fold {
						p = strings.ToLower(p)
					}
					ok, _ := path.Match(pat, p)
					return ok
				})
				j++
			}
		}
	}
	if !reads || a.cwd == "" {
		return
	}
	n := 0
	for _, start := range starts {
		s := start.text
		if start.unknown {
			s = "." // a start the dry run cannot know: the cwd, as when none is given
		}
		root := shell.Abs(s, a.cwd)
		filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || n >= maxFound || a.d.Past() {
				return filepath.SkipAll
			}
			n++
			if !e.Type().IsRegular() {
				return nil
			}
			shown := s // as find prints it: the start as given ("./x" under "."), then the path under it
			if rel := strings.TrimPrefix(slash(p), slash(root)); rel != "" {
				shown = strings.TrimSuffix(s, "/") + rel
			}
			for _, test := range tests {
				if !all && !test(shown) {
					return nil
				}
			}
			a.d.read(a, slash(p))
			return nil
		})
	}
}

// ShellReads returns the files a shell command run in cwd reads, absolute
// and in order: the operands of readRules and every input redirection,
// found by the first pass of the guard's dry run. cwd may be where the
// command ended (PostToolUse keeps a cd), so a command away from the root
// is also read as run from it: a read armed twice costs a check, one
// missed the promise. A panic ends the analysis with what it found.
func ShellReads(cmd, cwd, root, home string) []string {
	if strings.TrimSpace(cmd) == "" {
		return []string{}
	}
	s := New(root, home, nil)
	cwd, root = path.Clean(slash(cwd)), path.Clean(slash(root))
	reads := s.shellReads(cmd, cwd)
	if cwd != root {
		more := s.shellReads(cmd, root)
		for _, p := range more {
			if !slices.Contains(reads, p) {
				reads = append(reads, p)
			}
		}
	}
	return reads
}

// shellReads is ShellReads from the one directory cwd.
func (s *Set) shellReads(cmd, cwd string) (reads []string) {
	d := s.newDryRun(cmd)
	d.recording, d.readSeen = true, map[string]bool{}
	defer func() {
		if recover() != nil {
			d.mu.Lock()
			reads = append([]string{}, d.reads...)
			d.mu.Unlock()
		}
	}()
	if !d.plain(cmd, cwd) {
		if f := d.Load(cmd); f != nil {
			d.Top = f
			(&shell.Shell{Run: d.Run, Pass: shell.Passes[0], Top: true}).RunFile(f, cwd, nil, nil)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	// A copy: a runner left behind past its deadline may still append.
	return append([]string{}, d.reads...)
}
