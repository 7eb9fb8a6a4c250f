package guard

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/stopgate/stopgate/internal/runline"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// call runs before every simple command, builtins and functions included:
// it counts steps and records which commands of the top script ran.
func (s *shell) call(ctx context.Context, args []string) ([]string, error) {
	hc := interp.HandlerCtx(ctx)
	if args[0] == tooDeep {
		s.d.doubt("it nests deeper than the guard's dry run follows")
		return nil, errLimit
	}
	if args[0] == runline.MemCheck {
		args, err := runline.CheckMemory(hc)
		if err != nil {
			s.d.doubt(tooMuch) // here: a command substitution swallows the error
		}
		return args, err
	}
	if runline.ArgsTooBig(args) || s.d.printed.Add(int64(runline.Printed(args, hc.Env))) > runline.MaxPrinted {
		s.d.doubt(tooMuch)
		return nil, runline.ErrMemory
	}
	if s.d.steps.Add(1) > maxSteps {
		return nil, errLimit
	}
	if s.top {
		s.d.mu.Lock()
		s.d.ran[hc.Pos] = true
		s.d.mu.Unlock()
	}
	if (args[0] == "builtin" || args[0] == "command") && len(args) > 1 && reparsed[args[1]] {
		args = args[1:]
	}
	if args[0] == "kill" || len(args) > 1 && args[1] == "kill" && (args[0] == "command" || args[0] == "builtin") {
		// A builtin the interpreter does not run: judged here, not in exec.
		a := s.analyzer(hc)
		if h := a.run(a.words(args)); h != nil {
			s.d.found(h)
			return nil, errHit
		}
		// Then a stub, with the pass's status (the interpreter's kill
		// would fail as unsupported).
		return []string{runline.MemCheck, strconv.Itoa(int(s.p.status))}, nil
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
			p := runline.Abs(args[1], hc.Dir)
			if c := s.d.file(p); c != nil && c.unknown() {
				s.d.found(&Hit{Target: args[1], By: strings.Join(args, " "),
					Why: "it sources a file written in the same call, whose content the guard cannot know", doubt: true})
				return nil, errHit
			}
			// Run the file's text as eval would, prepared like any script.
			a := s.analyzer(hc)
			if r, err := a.read(args[1]); err == nil {
				if b, err := io.ReadAll(r); err == nil {
					if bytes.Contains(b, []byte(unknownMark)) {
						s.d.found(&Hit{Target: args[1], By: strings.Join(args, " "),
							Why: "it sources a file the guard cannot read in full (larger than it reads)", doubt: true})
						return nil, errHit
					}
					s.d.text(string(b))
					return []string{"eval", prepared(string(b))}, nil
				}
			}
		}
	case "trap":
		// The interpreter runs only EXIT and ERR traps: judge the action
		// of any other signal as a script of its own.
		if len(args) > 2 {
			(&shell{d: s.d, p: s.p, depth: s.depth + 1}).run(args[1], hc.Dir, nil, nil)
			if s.d.hitNow() != nil {
				return nil, errHit
			}
			args = append([]string{"trap", prepared(args[1])}, args[2:]...)
		}
	}
	return args, nil
}

// redirectBy is the statement of the top script whose redirection
// names name, for the reason; def when none does (a nested script).
func (d *dryRun) redirectBy(name string, env expand.Environ, def string) string {
	if d.top == nil {
		return def
	}
	cfg := &expand.Config{Env: env}
	by := def
	syntax.Walk(d.top, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok || by != def {
			return by == def
		}
		for _, rd := range st.Redirs {
			if t, err := expand.Literal(cfg, rd.Word); err == nil && writesFile(rd) && t == name {
				by = d.src[st.Pos().Offset():st.End().Offset()]
				return false
			}
		}
		return true
	})
	return by
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
	if !runline.IsName(name) {
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

// exec is every program: judged by the policy table, then stubbed.
func (s *shell) exec(ctx context.Context, args []string) error {
	if ok, err := runline.Status(args); ok {
		return err
	}
	hc := interp.HandlerCtx(ctx)
	a := s.analyzer(hc)
	ws := a.words(args)
	if h := a.run(ws); h != nil {
		s.d.found(h)
		return errHit
	}
	if s.d.hitNow() != nil {
		return errHit // found by a nested shell of this program
	}
	s.output(a, ws)
	if s.p.status != 0 {
		return interp.ExitStatus(s.p.status)
	}
	return nil
}

// output writes what the stub of a program prints: cat and tee their
// input, ls and find their operands, anything else a value the guard
// cannot know.
func (s *shell) output(a *analyzer, ws []word) {
	out := counted{a.hc.Stdout, &s.d.printed}
	name := ""
	if !ws[0].unknown {
		name = path.Base(ws[0].text)
	}
	switch name {
	case "cat":
		files := 0
		for _, w := range ws[1:] {
			if strings.HasPrefix(w.text, "-") && w.text != "-" {
				continue
			}
			files++
			if w.text == "-" {
				io.Copy(out, a.stdin())
			} else if w.unknown {
				io.WriteString(out, unknownMark+"\n")
			} else if r, err := a.read(w.text); err == nil {
				io.Copy(out, r)
			}
		}
		if files == 0 {
			io.Copy(out, a.stdin())
		}
		return
	case "tee":
		in, _ := io.ReadAll(a.stdin())
		out.Write(in)
		for _, w := range parseOpts(ws[1:], "").ops {
			if !w.unknown {
				c := &capture{known: true}
				c.buf.Write(in)
				s.d.mu.Lock()
				s.d.files[runline.Abs(w.text, a.hc.Dir)] = c
				s.d.mu.Unlock()
			}
		}
		return
	case "ls", "find":
		for _, w := range ws[1:] {
			if !strings.HasPrefix(w.text, "-") {
				io.WriteString(out, w.text+"\n")
			}
		}
	}
	io.WriteString(out, unknownMark+"\n")
}

// open judges a redirection: a write to a protected path is a hit, any
// other write is captured; a read sees the captured or the real file.
func (s *shell) open(ctx context.Context, name string, flag int, _ os.FileMode) (io.ReadWriteCloser, error) {
	hc := interp.HandlerCtx(ctx)
	a := s.analyzer(hc)
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_APPEND|os.O_CREATE|os.O_TRUNC) != 0 {
		a.by = "> " + name
		w := a.word(name)
		if h := a.target(w, under); h != nil {
			h.By = s.d.redirectBy(name, hc.Env, h.By)
			s.d.found(h)
			return nil, errHit
		}
		if w.unknown || strings.HasPrefix(name, "/dev/") {
			return &capture{}, nil
		}
		c := &capture{known: true}
		p := runline.Abs(w.text, hc.Dir)
		s.d.mu.Lock()
		if old := s.d.files[p]; old != nil && flag&os.O_APPEND != 0 {
			c = old
		} else {
			s.d.files[p] = c
		}
		s.d.mu.Unlock()
		return c, nil
	}
	if strings.Contains(name, unknownMark) {
		return reader{strings.NewReader(unknownMark + "\n")}, nil
	}
	s.d.read(a, name)
	if h := a.target(a.word(name), under); h != nil && !h.proc {
		s.d.mu.Lock()
		s.d.lockable = h // a descriptor on a protected file, which flock could hold
		s.d.mu.Unlock()
	}
	r, err := a.read(name)
	if err != nil {
		return nil, err
	}
	return reader{r}, nil
}

// stat answers the shell's tests and cd: the real file system, with what
// the dry run wrote, and any unknown path taken to be a folder.
func (s *shell) stat(ctx context.Context, name string, follow bool) (fs.FileInfo, error) {
	if strings.Contains(name, unknownMark) {
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
	if c := s.d.file(path.Clean(slash(name))); c != nil {
		return fakeInfo{name: path.Base(name), dir: c.dir}, nil
	}
	return nil, err
}

// access answers cd's and test's permission checks like stat.
func (s *shell) access(ctx context.Context, name string, mode interp.AccessMode) error {
	if strings.Contains(name, unknownMark) || s.d.file(path.Clean(slash(name))) != nil {
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

// counted is a stub's stdout, counted against runline.MaxPrinted: past
// it the stub prints nothing more, and the next call stops the run.
type counted struct {
	w io.Writer
	n *atomic.Int64
}

func (c counted) Write(p []byte) (int, error) {
	if c.n.Add(int64(len(p))) > runline.MaxPrinted {
		return len(p), nil
	}
	return c.w.Write(p)
}
