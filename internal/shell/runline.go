// Package shell is stopgate's one bounded dry-run interpreter over mvdan.cc/sh, for the guard and run lines (docs/guard.md).
package shell

import (
	"io"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stopgate/stopgate/internal/regular"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// File is one file a run line executes.
type File struct {
	Path      string // absolute and clean, inside the root
	SourcedBy string // the program that sources it; "" for one the run line runs
}

// Files returns the files inside root that run executes, in order, each once.
func Files(run, root string) []File {
	r := newResolver(run, root)
	if p, ok := plainProgram(run, r.Root); ok {
		r.project(r.top, p, r.Root, nil, false)
		return r.files()
	}
	r.top.run(run, r.Root, nil)
	if len(r.Doubts()) > 0 {
		r.named(run)
	}
	return r.files()
}

// named records the programs the line's own commands name, from its cd and the root, once the analysis stopped.
func (r *resolver) named(run string) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(run), "")
	if err != nil {
		return
	}
	// Quotes and $CLAUDE_PROJECT_DIR expanded, the usual spellings of a run line.
	cfg := &expand.Config{Env: expand.ListEnviron("CLAUDE_PROJECT_DIR=" + r.Root), NoUnset: true}
	dir := r.Root
	syntax.Walk(f, func(n syntax.Node) bool {
		c, ok := n.(*syntax.CallExpr)
		if !ok || len(c.Args) == 0 {
			return true
		}
		args := make([]string, len(c.Args))
		for i, w := range c.Args {
			args[i], _ = expand.Literal(cfg, w)
		}
		if i, ok := Unwrap(args); ok && i+2 == len(args) && args[i] == "cd" {
			dir = Abs(args[i+1], dir)
		}
		for _, d := range slices.Compact([]string{dir, r.Root}) {
			r.Exec(r.top, interp.HandlerContext{Dir: d, Stdout: io.Discard}, args)
		}
		return true
	})
}

// Key is what Files of run depends on besides the files (not a plain line's arguments).
func Key(run string) string {
	if first, ok := plainLine(run); ok {
		return first
	}
	return run
}

type resolver struct {
	*Run
	top *Shell
	out []File
}

func newResolver(run, root string) *resolver {
	r := &resolver{}
	r.Run = NewRun(run, path.Clean(filepath.ToSlash(root)), "", r)
	r.deadline = time.Now().Add(500 * time.Millisecond) // past it, the analysis stops with what it found
	r.top = &Shell{Run: r.Run, Pass: Passes[0], NoGlob: true}
	return r
}

func (r *resolver) add(f File) bool {
	return locked(r.Run, func() bool {
		if slices.ContainsFunc(r.out, func(o File) bool { return o.Path == f.Path }) {
			return false
		}
		r.out = append(r.out, f)
		return true
	})
}

func (r *resolver) files() []File { return locked(r.Run, func() []File { return slices.Clone(r.out) }) }

// project records prog run in dir with args, when inside the root, and follows its sources; shell: sh runs it.
func (r *resolver) project(s *Shell, prog, dir string, args []string, shell bool) {
	p := Abs(prog, dir)
	if !r.inside(p) || !r.add(File{Path: p}) {
		return
	}
	text, err := ReadFile(p)
	if err != nil || !shell && !shellScript(p, text) || !sources().MatchString(text) {
		return
	}
	s.Script(text, dir, p, expand.ListEnviron("BASH_SOURCE="+p), args)
}

// sources matches a script that may source a file: only such a one is dry-run (a cheap protected set).
var sources = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[\s;&|({])(source|\.)\s`) })

func shellScript(p, text string) bool {
	if line, ok := strings.CutPrefix(text, "#!"); ok {
		line, _, _ = strings.Cut(line, "\n")
		f := strings.Fields(line)
		if len(f) > 1 && path.Base(f[0]) == "env" {
			f = f[1:]
		}
		return len(f) > 0 && IsShell(path.Base(f[0]))
	}
	return strings.HasSuffix(p, ".sh") || strings.HasSuffix(p, ".bash")
}

// ReadFile is the text of the regular file p, bounded; anything else is refused unread (a FIFO blocks).
func ReadFile(p string) (string, error) {
	b, _, err := regular.Read(p, MaxRead)
	return string(b), err
}

// Source follows and records a file sourced inside the project.
func (r *resolver) Source(s *Shell, p string) bool {
	if !r.inside(p) {
		return false
	}
	if _, err := ReadFile(p); err != nil {
		return false
	}
	r.add(File{Path: p, SourcedBy: s.Zero})
	return true
}

// Exec records a project program the run line runs (not its scripts': the agent's), follows sh -c, answers the path helpers.
func (r *resolver) Exec(s *Shell, hc interp.HandlerContext, args []string) error {
	named := func(j int) { // scripts/taskset, whatever its name, and behind a wrapper
		if s.Zero == "" && strings.Contains(args[j], "/") && runnable(args[j]) {
			r.project(s, args[j], hc.Dir, args[j+1:], false)
		}
	}
	named(0)
	i, ok := unwrap(args, named)
	if !ok || i >= len(args) || unknown(args[i]) {
		return nil
	}
	args = args[i:]
	name := path.Base(args[0])
	switch {
	case name == "dirname" || name == "basename" || name == "realpath" || name == "readlink":
		i := slices.IndexFunc(args[1:], func(a string) bool { return !strings.HasPrefix(a, "-") || a == "-" })
		if i < 0 {
			return nil
		}
		p := args[1+i]
		switch name {
		case "dirname":
			p = path.Dir(p)
		case "basename":
			p = path.Base(p)
		default:
			p = Abs(p, hc.Dir)
		}
		io.WriteString(s.Stdout(hc), p+"\n")
		return nil
	case s.Zero != "":
		return nil
	}
	prog, rest, shell, code := command(args)
	if code != "" {
		s.Script(code, hc.Dir, "", nil, nil)
		return nil
	}
	if prog != "" {
		r.project(s, prog, hc.Dir, rest, shell)
	}
	return nil
}

func (r *resolver) inside(p string) bool { return Within(p, r.Root) && p != r.Root }

// command is the program args runs: a shell's or interpreter's script (code: sh -c's), else a path; "" for a bare name or a glob.
func command(args []string) (prog string, rest []string, shell bool, code string) {
	name := path.Base(args[0])
	base, interpreted := Interpreter(name)
	switch {
	case IsShell(name) || name == "." || name == "source":
		o := ShellOpts(args[1:])
		if o.Has("c") && len(o.Ops) > 0 {
			return "", nil, true, o.Ops[0]
		}
		if len(o.Ops) > 0 {
			prog, rest, shell = o.Ops[0], o.Ops[1:], true
		}
	case interpreted:
		spec := Interps[base]
		o := Parse(args[1:], "+"+spec.Values, spec.Long...)
		if len(o.Ops) > 0 && o.Ops[0] != "-" && !o.Has("m") && !o.Has(spec.Code...) {
			prog, rest = o.Ops[0], o.Ops[1:]
		}
	case strings.Contains(args[0], "/"):
		prog, rest = args[0], args[1:]
	}
	if !runnable(prog) {
		return "", nil, false, ""
	}
	return prog, rest, shell, ""
}

// runnable is a program word the run line names: not unknown, nor a glob of it (the agent's files).
func runnable(prog string) bool {
	return prog != "" && !unknown(prog) && !strings.ContainsAny(prog, "*?[")
}

// The resolver judges nothing else: a sourced file is read as far as it can be.
func (r *resolver) Write(*Shell, interp.HandlerContext, string) (string, bool, error) {
	return "", false, nil
}
func (r *resolver) Read(*Shell, interp.HandlerContext, string) {}
func (r *resolver) Refuse(_, _, _ string) error                { return nil }
func (r *resolver) Hit() bool                                  { return false }

// plainProgram is a plain run line's program without a dry run ("" outside the root); false for any other.
func plainProgram(run, root string) (p string, ok bool) {
	first, ok := plainLine(run)
	if p = Abs(first, root); !ok || !Within(p, root) || p == root {
		return "", ok
	}
	return p, true
}

func plainLine(run string) (string, bool) {
	words, ok := PlainWords(run)
	if !ok || len(words) == 0 || !strings.Contains(words[0], "/") {
		return "", false
	}
	first := words[0]
	name := path.Base(first)
	_, wrapper := wrappers[name]
	if _, interp := Interpreter(name); wrapper || interp || IsShell(name) {
		return "", false
	}
	return first, true
}

// PlainWords splits text of letters, digits, /._-+,@:% and blanks into words; false otherwise.
func PlainWords(text string) ([]string, bool) {
	if strings.Trim(text, letters+"0123456789 \t/.-+,@:%") != "" {
		return nil, false
	}
	return strings.Fields(text), true
}

// Abs is p made absolute against dir unless it is, and clean.
func Abs(p, dir string) string {
	p = filepath.ToSlash(p)
	if !strings.HasPrefix(p, "/") {
		p = dir + "/" + p
	}
	return path.Clean(p)
}

// Within reports whether p is base or lies under it.
func Within(p, base string) bool {
	return p == base || base == "/" || strings.HasPrefix(p, base+"/")
}
