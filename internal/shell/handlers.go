package shell

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// ErrHit stops a dry run that found what its Judge refuses.
var ErrHit = errors.New("guard: protected path hit")

// call runs before every simple command, builtins and functions included:
// it bounds the run, records which commands of the top script ran, and
// gives the builtins the interpreter lacks or reads otherwise.
func (s *Shell) call(ctx context.Context, args []string) ([]string, error) {
	hc := interp.HandlerCtx(ctx)
	if args, err, done := s.bound(hc, args); done {
		return args, err
	}
	if s.Top {
		s.Run.with(func() { s.Run.ran[hc.Pos] = true })
	}
	if (args[0] == "builtin" || args[0] == "command") && len(args) > 1 && reparsed[args[1]] {
		args = args[1:]
	}
	if args[0] == "kill" || len(args) > 1 && args[1] == "kill" && (args[0] == "command" || args[0] == "builtin") {
		// A builtin the interpreter does not run: judged here, not in exec.
		if err := s.Run.Judge.Kill(s, hc, args); err != nil {
			return nil, err
		}
		// Then a stub, with the pass's status (the interpreter's kill
		// would fail as unsupported).
		return []string{MemCheck, strconv.Itoa(int(s.Pass.Status))}, nil
	}
	switch args[0] {
	case "eval":
		return []string{"eval", prepared(strings.Join(args[1:], " "))}, nil
	case "printf":
		return printfV(hc, args), nil
	case "command":
		if len(args) > 1 && args[1] == "-p" {
			return append(args[:1:1], args[2:]...), nil // the interpreter lacks -p
		}
	case "source", ".":
		if len(args) > 1 {
			return s.source(hc, args)
		}
	case "trap":
		// The interpreter runs only EXIT and ERR traps: judge the action
		// of any other signal as a script of its own.
		if len(args) > 2 {
			(&Shell{Run: s.Run, Pass: s.Pass, Depth: s.Depth + 1}).run(args[1], hc.Dir, nil, nil)
			if s.Run.Judge.Hit() {
				return nil, ErrHit
			}
			args = append([]string{"trap", prepared(args[1])}, args[2:]...)
		}
	}
	return args, nil
}

// bound answers a call the run's bounds decide: the command prepare left
// of a script too deep, a memory check, arguments too big, a step past
// maxSteps. done is false for any other call.
func (s *Shell) bound(hc interp.HandlerContext, args []string) (_ []string, _ error, done bool) {
	if args[0] == tooDeep {
		s.Run.Doubt("it nests deeper than the guard's dry run follows")
		return nil, ErrLimit, true
	}
	if args, err, done := memory(hc, args, &s.Run.printed); done {
		if err != nil {
			s.Run.Doubt(tooMuch) // here too: a command substitution swallows the error
		}
		return args, err, true
	}
	if s.Run.steps.Add(1) > maxSteps {
		return nil, ErrLimit, true
	}
	return nil, nil, false
}

// source runs the file's text as eval would, prepared like any script;
// a file whose text the run cannot know in full is refused.
func (s *Shell) source(hc interp.HandlerContext, args []string) ([]string, error) {
	p := Abs(args[1], hc.Dir)
	if c := s.Run.File(p); c != nil && c.Unknown() {
		return nil, s.Run.Judge.Refuse(args[1], strings.Join(args, " "),
			"it sources a file written in the same call, whose content the guard cannot know")
	}
	if r, err := s.Run.Open(args[1], hc.Dir); err == nil {
		if b, err := io.ReadAll(r); err == nil {
			if bytes.Contains(b, []byte(Unknown)) {
				return nil, s.Run.Judge.Refuse(args[1], strings.Join(args, " "),
					"it sources a file the guard cannot read in full (larger than it reads)")
			}
			s.Run.text(string(b))
			return []string{"eval", prepared(string(b))}, nil
		}
	}
	return args, nil
}

// reparsed are the builtins that parse text of their own (eval's words,
// a trap's action, a sourced file): the call handler hands them the text
// prepared, so their process substitutions and background jobs are as safe
// as the script's.
var reparsed = map[string]bool{"eval": true, "trap": true, "source": true, ".": true}

// prepared is src parsed, prepared and printed back; src itself when it
// does not parse (the interpreter reports that).
func prepared(src string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		return src
	}
	prepare(f)
	var b strings.Builder
	if syntax.NewPrinter().Print(&b, f) != nil {
		return src
	}
	return b.String()
}

// printfV gives printf -v VAR, which the interpreter lacks, as the
// assignment it makes.
func printfV(hc interp.HandlerContext, args []string) []string {
	if len(args) < 4 || args[1] != "-v" {
		return args
	}
	name, _, _ := strings.Cut(args[2], "[")
	if !IsName(name) {
		return args
	}
	cfg := &expand.Config{Env: hc.Env}
	var b strings.Builder
	format, rest := args[3], args[4:]
	for {
		out, n, err := expand.Format(cfg, format, rest)
		if err != nil {
			return args
		}
		b.WriteString(out)
		rest = rest[n:]
		if n == 0 || len(rest) == 0 {
			break
		}
	}
	q, err := syntax.Quote(b.String(), syntax.LangBash)
	if err != nil {
		return args
	}
	return []string{"eval", args[2] + "=" + q}
}

// exec is every program: judged by the Judge, which prints its stub's
// output, then it exits with the pass's status.
func (s *Shell) exec(ctx context.Context, args []string) error {
	if ok, err := Status(args); ok {
		return err
	}
	if err := s.Run.Judge.Exec(s, interp.HandlerCtx(ctx), args); err != nil {
		return err
	}
	if s.Pass.Status != 0 {
		return interp.ExitStatus(s.Pass.Status)
	}
	return nil
}

// open judges a redirection: a write to a protected path is a hit, any
// other write is captured; a read sees the captured or the real file.
func (s *Shell) open(ctx context.Context, name string, flag int, _ os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_TRUNC) != 0 {
		target, known, err := s.Run.Judge.Write(s, hc, name)
		if err != nil {
			return nil, err
		}
		if !known || strings.HasPrefix(name, "/dev/") {
			return &Capture{}, nil
		}
		p := Abs(target, hc.Dir)
		return locked(s.Run, func() *Capture {
			if old := s.Run.files[p]; old != nil && flag&os.O_APPEND != 0 {
				return old
			}
			s.Run.files[p] = &Capture{known: true}
			return s.Run.files[p]
		}), nil
	}
	if strings.Contains(name, Unknown) {
		return reader{strings.NewReader(Unknown + "\n")}, nil
	}
	s.Run.Judge.Read(s, hc, name)
	r, err := s.Run.Open(name, hc.Dir)
	if err != nil {
		return nil, err
	}
	return reader{r}, nil
}

// stat answers the shell's tests and cd: the real file system, with what
// the dry run wrote, and any unknown path taken to be a folder.
func (s *Shell) stat(ctx context.Context, name string, follow bool) (fs.FileInfo, error) {
	if strings.Contains(name, Unknown) {
		return fakeInfo{name: path.Base(name), dir: true}, nil
	}
	var fi fs.FileInfo
	var err error
	if follow {
		fi, err = os.Stat(name)
	} else {
		fi, err = os.Lstat(name)
	}
	if err == nil {
		return fi, nil
	}
	if c := s.Run.File(path.Clean(filepath.ToSlash(name))); c != nil {
		return fakeInfo{name: path.Base(name), dir: c.Dir}, nil
	}
	return nil, err
}

// access answers cd's and test's permission checks like stat.
func (s *Shell) access(ctx context.Context, name string, mode interp.AccessMode) error {
	if strings.Contains(name, Unknown) || s.Run.File(path.Clean(filepath.ToSlash(name))) != nil {
		return nil
	}
	return interp.DefaultAccessHandler()(ctx, name, mode)
}

type fakeInfo struct {
	name string
	dir  bool
}

func (f fakeInfo) Name() string { return f.name }
func (f fakeInfo) Size() int64  { return 0 }
func (f fakeInfo) Mode() fs.FileMode {
	if f.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.dir }
func (f fakeInfo) Sys() any           { return nil }

// Stdout is a stub's stdout, counted against MaxPrinted: past it the stub
// prints nothing more, and the next call stops the run.
func (s *Shell) Stdout(hc interp.HandlerContext) io.Writer { return counted{hc.Stdout, &s.Run.printed} }

type counted struct {
	w io.Writer
	n *atomic.Int64
}

func (c counted) Write(p []byte) (int, error) {
	if c.n.Add(int64(len(p))) > MaxPrinted {
		return len(p), nil
	}
	return c.w.Write(p)
}
