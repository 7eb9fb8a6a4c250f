// Package shell is stopgate's one bounded dry-run interpreter over
// mvdan.cc/sh: the guard judges a Bash command by running it here with a
// Judge (dryrun.go), and Files says which files of a project a validator's
// run line executes (docs/guard.md), the one answer behind the guard's
// protected set and the inputs detect records.
package shell

import (
	"context"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
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

// Bounds of one analysis: past them it stops with what it found.
const (
	lineSteps    = 2000
	lineDepth    = 4 // scripts run by scripts, sh -c in sh -c
	lineDeadline = 500 * time.Millisecond
)

// Files returns the files inside root that the run line run executes, in
// the order it runs them, each once.
func Files(run, root string) []File {
	root = path.Clean(filepath.ToSlash(root))
	r := &resolver{root: root, seen: map[string]bool{}, end: time.Now().Add(lineDeadline)}
	if p, ok := plainProgram(run, root); ok {
		if p != "" {
			r.program(p, root, nil, false, 0)
		}
		return r.files()
	}
	r.script(run, "", root, nil, 0)
	return r.files()
}

// Key is what Files of run depends on besides the files: a plain run
// line's arguments do not count, so thousands of them resolve once.
func Key(run string) string {
	if first, ok := plainLine(run); ok {
		return first
	}
	return run
}

type resolver struct {
	root    string
	steps   atomic.Int64
	printed atomic.Int64
	end     time.Time

	mu   sync.Mutex // a dry run left behind at its deadline may still add
	seen map[string]bool
	out  []File
}

func (r *resolver) add(f File) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.seen[f.Path] {
		return false
	}
	r.seen[f.Path] = true
	r.out = append(r.out, f)
	return true
}

func (r *resolver) files() []File {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]File(nil), r.out...)
}

// program records p, run in dir with args, and follows a shell script's
// sources; shell says a shell runs it (sh x.sh).
func (r *resolver) program(p, dir string, args []string, shell bool, depth int) {
	if !r.add(File{Path: p}) || depth >= lineDepth {
		return
	}
	text, err := ReadFile(p)
	if err != nil || !shell && !shellScript(p, text) || !sources().MatchString(text) {
		return
	}
	r.script(text, p, dir, args, depth+1)
}

// sources matches a script that may source a file: only such a script is
// dry-run, which keeps the protected set cheap.
var sources = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(^|[\s;&|({])(source|\.)\s`) })

// shellScript reports whether a program is a shell script: its #! line
// names a shell, or it has none and is named *.sh or *.bash.
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

// ErrNotRegular is ReadFile's answer for a folder, a device or a FIFO.
var ErrNotRegular = regular.ErrNotRegular

// ReadFile is the text of the regular file p, bounded; anything else is
// refused unread (a FIFO's open would block).
func ReadFile(p string) (string, error) {
	f, _, err := regular.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxRead))
	return string(b), err
}

// script dry-runs src: the run line (zero "") or the script at zero, in
// dir with positional params.
func (r *resolver) script(src, zero, dir string, params []string, depth int) {
	f := parsed(src, zero)
	if f == nil {
		return
	}
	// As the gate runs it: any other variable is unset.
	env := []string{"CLAUDE_PROJECT_DIR=" + r.root, "PATH=/usr/local/bin:/usr/bin:/bin"}
	if zero != "" {
		env = append(env, "BASH_SOURCE="+zero)
	}
	opts := []interp.RunnerOption{
		interp.Env(expand.ListEnviron(env...)),
		interp.Dir(dir),
		interp.StdIO(strings.NewReader(""), io.Discard, io.Discard),
		interp.CallHandler(func(ctx context.Context, args []string) ([]string, error) {
			return r.call(ctx, args, zero, depth)
		}),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc {
			return func(ctx context.Context, args []string) error { return r.exec(ctx, args, zero, depth) }
		}),
		interp.OpenHandler(open),
	}
	flags := []string{}
	if zero == "" {
		// No globs: what one finds (tests/*.sh) is the agent's own code.
		flags = append(flags, "-f")
	}
	opts = append(opts, interp.Params(append(append(flags, "--"), params...)...))
	if runner, err := interp.New(opts...); err == nil {
		RunUntil(runner, f, r.end) // what it found is recorded, however it ended
	}
}

// ErrStopped is a dry run that did not finish: past its deadline, or
// ended by an interpreter panic.
var ErrStopped = errors.New("dry run stopped before its end")

// RunUntil dry-runs f in r until end: an interpreter panic ends the run,
// not the hook. A run still going a second past end (a read the context
// cannot stop) is left behind (left): its runner must not be used.
func RunUntil(r *interp.Runner, f *syntax.File, end time.Time) (left bool, err error) {
	ctx, cancel := context.WithDeadline(context.Background(), end)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if recover() != nil {
				done <- ErrStopped
			}
		}()
		done <- r.Run(ctx, f)
	}()
	timer := time.NewTimer(time.Until(end) + time.Second)
	defer timer.Stop()
	select {
	case err = <-done:
	case <-timer.C:
		return true, ErrStopped
	}
	if ctx.Err() != nil && !errors.Is(err, ErrMemory) {
		return false, ErrStopped
	}
	return false, err
}

// call sees every simple command: it bounds the run and follows source.
func (r *resolver) call(ctx context.Context, args []string, zero string, depth int) ([]string, error) {
	hc := interp.HandlerCtx(ctx)
	if r.steps.Add(1) > lineSteps {
		return nil, context.Canceled // statements too: for ((;;)); do x=1; done
	}
	if args, err, done := memory(hc, args, &r.printed); done {
		return args, err
	}
	if (args[0] == "source" || args[0] == ".") && len(args) > 1 {
		p := Abs(args[1], hc.Dir)
		if !Within(p, r.root) || p == r.root {
			return []string{":"}, nil // outside the project: not followed
		}
		text, err := ReadFile(p)
		if err != nil {
			return []string{":"}, nil
		}
		r.add(File{Path: p, SourcedBy: zero})
		return []string{"eval", preparedLine(text)}, nil
	}
	return args, nil
}

// exec is every program: a stub that records a project program the run
// line runs (not one a validator script runs: the agent's project),
// follows sh -c, and answers the path helpers.
func (r *resolver) exec(ctx context.Context, args []string, zero string, depth int) error {
	if ok, err := status(args); ok {
		return err
	}
	hc := interp.HandlerCtx(ctx)
	i, ok := Unwrap(args)
	if !ok {
		return nil
	}
	args = args[i:]
	if len(args) == 0 || unknown(args[0]) {
		return nil
	}
	name := path.Base(args[0])
	switch {
	case name == "dirname" || name == "basename" || name == "realpath" || name == "readlink":
		pathHelper(hc, args)
		return nil
	case zero != "":
		return nil
	}
	prog, rest, shell := args[0], args[1:], false
	if IsShell(name) {
		shell = true
		code, script, i := shellOperand(args[1:])
		if code != "" {
			if depth < lineDepth {
				r.script(code, "", hc.Dir, nil, depth+1)
			}
			return nil
		}
		prog, rest = script, args[1+i:]
	} else if base, ok := Interpreter(name); ok {
		script, i := interpreterOperand(Interps[base], args[1:])
		prog, rest = script, args[1+i:]
	} else if !strings.Contains(prog, "/") {
		return nil // looked up in PATH, not in the project
	}
	if prog == "" || unknown(prog) || zero == "" && strings.ContainsAny(prog, "*?[") {
		return nil // a glob of the run line: the agent's files
	}
	p := Abs(prog, hc.Dir)
	if Within(p, r.root) && p != r.root {
		r.program(p, hc.Dir, rest, shell, depth)
	}
	return nil
}

// shellOperand is sh's inline code (-c) or script operand, and the index
// of the argument after the script.
func shellOperand(args []string) (code, script string, next int) {
	for i := 0; i < len(args); i++ {
		t := args[i]
		switch {
		case t == "-c" || strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.Contains(t[1:], "c"):
			if i+1 < len(args) {
				return args[i+1], "", len(args)
			}
			return "", "", len(args)
		case t == "-o" || t == "-O" || t == "+o" || t == "+O":
			i++
		case t == "--":
			if i+1 < len(args) {
				return "", args[i+1], i + 2
			}
			return "", "", len(args)
		case strings.HasPrefix(t, "-") || strings.HasPrefix(t, "+"):
		default:
			return "", t, i + 1
		}
	}
	return "", "", len(args)
}

// interpreterOperand is an interpreter's script operand ("" for inline
// code, a module or stdin) and the index of the argument after it.
func interpreterOperand(spec Interp, args []string) (string, int) {
	for i := 0; i < len(args); i++ {
		t := args[i]
		if t == "-" || !strings.HasPrefix(t, "-") {
			if t == "-" {
				return "", i + 1
			}
			return t, i + 1
		}
		name := strings.TrimLeft(t, "-")
		if name == "m" || slices.Contains(spec.Code, name) {
			return "", len(args)
		}
		if len(t) == 2 && strings.Contains(spec.Values, t[1:]) || strings.HasPrefix(t, "--") && slices.Contains(spec.Long, name) {
			i++
		}
	}
	return "", len(args)
}

// pathHelper prints what dirname, basename, realpath and readlink -f
// print: DIR=$(cd "$(dirname "$0")" && pwd) resolves.
func pathHelper(hc interp.HandlerContext, args []string) {
	var ops []string
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") || a == "-" {
			ops = append(ops, a)
		}
	}
	if len(ops) == 0 {
		return
	}
	p := ops[0]
	var out string
	switch path.Base(args[0]) {
	case "dirname":
		out = path.Dir(p)
	case "basename":
		out = path.Base(p)
	default:
		out = Abs(p, hc.Dir)
	}
	io.WriteString(hc.Stdout, out+"\n")
}

// open reads the real files, bounded, and writes nothing.
func open(ctx context.Context, name string, flag int, _ os.FileMode) (io.ReadWriteCloser, error) {
	text := "" // a write, or a file it cannot read: nothing
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_TRUNC) == 0 {
		if t, err := ReadFile(Abs(name, interp.HandlerCtx(ctx).Dir)); err == nil {
			text = t
		}
	}
	return reader{strings.NewReader(text)}, nil
}

// parsed is src, the script at name, prepared; nil past the bounds.
func parsed(src, name string) *syntax.File {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), name)
	if err != nil || tooDeep(f) || weight(f) > maxWeight {
		return nil
	}
	Prepare(f)
	return f
}

// preparedLine is src parsed, with the memory checks, and printed back.
func preparedLine(src string) string {
	f := parsed(src, "")
	if f == nil {
		return ":"
	}
	var b strings.Builder
	if syntax.NewPrinter().Print(&b, f) != nil {
		return ":"
	}
	return b.String()
}

// plainProgram answers the usual run line, a path and plain arguments,
// without a dry run; ok is false for anything the shell must see, p is ""
// outside the project.
func plainProgram(run, root string) (p string, ok bool) {
	first, ok := plainLine(run)
	if !ok {
		return "", false
	}
	p = Abs(first, root)
	if !Within(p, root) || p == root {
		return "", true
	}
	return p, true
}

// plainLine is the program word of a plain run line, if it is one.
func plainLine(run string) (string, bool) {
	words, ok := PlainWords(run)
	if !ok || len(words) == 0 || !strings.Contains(words[0], "/") {
		return "", false
	}
	first := words[0]
	name := path.Base(first)
	if _, wrapper := wrappers[name]; wrapper || IsShell(name) {
		return "", false
	}
	if _, interp := Interpreter(name); interp {
		return "", false
	}
	return first, true
}

// PlainWords splits text the shell passes as written (letters, digits,
// /._-+,@:% and blanks) into words; false for anything else.
func PlainWords(text string) ([]string, bool) {
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(" \t/._-+,@:%", c) >= 0) {
			return nil, false
		}
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
