package shell

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stopgate/stopgate/internal/regular"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// A dry run: programs are stubs a Judge judges, writes are judged and kept in memory.
const (
	maxSteps    = 4000        // simple commands run, over all passes of one call
	maxDepth    = 8           // shells nested in shells
	dryDeadline = time.Second // of all passes of one call
)

var (
	errLimit   = errors.New("guard: dry run over its bounds")
	errStopped = errors.New("dry run stopped before its end") // past its deadline, or an interpreter panic
	// ErrHit stops a dry run that found what its Judge refuses.
	ErrHit = errors.New("guard: protected path hit")
)

// Judge is the policy a dry run asks at each step; an error it returns stops the run.
type Judge interface {
	Exec(s *Shell, hc interp.HandlerContext, args []string) error // and prints the stub's output to s.Stdout(hc)
	// Write judges a redirection that writes name: its path, if known.
	Write(s *Shell, hc interp.HandlerContext, name string) (target string, known bool, err error)
	Read(s *Shell, hc interp.HandlerContext, name string) // is told of a redirection that reads name
	// Refuse stops the run on a doubt about target, found in by; nil carries on.
	Refuse(target, by, why string) error
	Hit() bool // whether the run has found what stops it
}

// Pass is one dry run: unknown variables unset (Lenient) or Unknown, programs exit with Status.
type Pass struct {
	Lenient bool
	Status  uint8
}

// Passes: variables unset and programs succeeding, then unknown and failing.
var Passes = []Pass{{Lenient: true, Status: 0}, {Lenient: false, Status: 1}}

// Run is the state one judged command shares across passes and shells.
type Run struct {
	Judge       Judge
	Root        string       // $CLAUDE_PROJECT_DIR
	Home        string       // $HOME, or ""
	Src         string       // the command
	Top         *syntax.File // the command parsed, once Load has
	steps       atomic.Int64
	printed     atomic.Int64
	deadline    time.Time
	unknownVars atomic.Bool // the command read a variable it does not set

	mu     sync.Mutex
	doubts []string // why part of the command could not be followed
	texts  []string // every script seen, for the conservative mention check
	files  map[string]*Capture
	ran    map[syntax.Pos]bool // simple commands of the top script that ran
}

// NewRun is the state of one analysis of src, judged by j.
func NewRun(src, root, home string, j Judge) *Run {
	return &Run{Judge: j, Root: root, Home: home, Src: src, texts: []string{src}, ran: map[syntax.Pos]bool{},
		files: map[string]*Capture{}, deadline: time.Now().Add(dryDeadline)}
}

// Capture is a file written during the dry run: its content when known.
type Capture struct {
	buf   bytes.Buffer
	known bool
	Dir   bool
}

func (c *Capture) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) <= MaxRead {
		c.buf.Write(p)
	} else {
		c.known = false
	}
	return len(p), nil
}

// Unknown reports whether part of the content is not known; Text is what is.
func (c *Capture) Unknown() bool            { return !c.known || bytes.Contains(c.buf.Bytes(), []byte(Unknown)) }
func (c *Capture) Text() string             { return c.buf.String() }
func (c *Capture) Read([]byte) (int, error) { return 0, io.EOF }
func (c *Capture) Close() error             { return nil }

type reader struct{ io.Reader }

func (reader) Write(p []byte) (int, error) { return len(p), nil }
func (reader) Close() error                { return nil }

// locked is f's answer under d's lock, shared by passes, shells and a run left behind.
func locked[T any](d *Run, f func() T) T {
	d.mu.Lock()
	defer d.mu.Unlock()
	return f()
}

func (d *Run) with(f func()) { locked(d, func() any { f(); return nil }) }

// Doubt records why part of the command could not be followed.
func (d *Run) Doubt(why string) { d.with(func() { d.doubts = append(d.doubts, why) }) }
func (d *Run) text(s string)    { d.with(func() { d.texts = append(d.texts, s) }) }

// Doubts and Texts are the doubts recorded and every script seen.
func (d *Run) Doubts() []string { return locked(d, func() []string { return slices.Clone(d.doubts) }) }
func (d *Run) Texts() []string  { return locked(d, func() []string { return slices.Clone(d.texts) }) }

// UnknownVars: a variable read was never set; Ran: the top script's command at pos ran; File: what the run wrote to p.
func (d *Run) UnknownVars() bool       { return d.unknownVars.Load() }
func (d *Run) Ran(pos syntax.Pos) bool { return locked(d, func() bool { return d.ran[pos] }) }
func (d *Run) File(p string) *Capture  { return locked(d, func() *Capture { return d.files[p] }) }
func (d *Run) ForgetFiles()            { d.with(func() { d.files = map[string]*Capture{} }) }

// Wrote records that p was written with content it does not know, unless captured already.
func (d *Run) Wrote(p string, dir bool) {
	d.with(func() {
		if d.files[p] == nil {
			d.files[p] = &Capture{Dir: dir}
		}
	})
}

// Captured records that p was written with text.
func (d *Run) Captured(p string, text []byte) {
	c := &Capture{known: true}
	c.buf.Write(text)
	d.with(func() { d.files[p] = c })
}

func (d *Run) Past() bool { return time.Now().After(d.deadline) }

// Open is a file for the dry run to read: what this call wrote, else the real file, bounded.
func (d *Run) Open(name, dir string) (io.ReadWriteCloser, error) {
	p := Abs(name, dir)
	if c := d.File(p); c != nil && c.known {
		return reader{bytes.NewReader(c.buf.Bytes())}, nil
	} else if c != nil {
		return reader{strings.NewReader(Unknown + "\n")}, nil
	}
	text, err := ReadFile(p)
	if errors.Is(err, regular.ErrNotRegular) {
		err = nil
	} else if len(text) >= MaxRead { // ReadFile cut it at its bound: what follows is not known
		text += "\n" + Unknown + "\n"
	}
	return reader{strings.NewReader(text)}, err
}

// Shell is one interpreter in a dry run: the top script or a nested shell.
type Shell struct {
	Run    *Run
	Pass   Pass
	Depth  int
	Top    bool
	NoGlob bool           // set -f
	Zero   string         // $0 of a nested shell
	Env    expand.Environ // what a nested shell inherits: its caller's exported variables
}

// Script dry-runs src in dir as a shell nested in s, with $0 zero, env and params.
func (s *Shell) Script(src, dir, zero string, env expand.Environ, params []string) {
	(&Shell{Run: s.Run, Pass: s.Pass, Depth: s.Depth + 1, Zero: zero, Env: env}).run(src, dir, params)
}

func (s *Shell) run(src, dir string, params []string) {
	s.Run.text(src)
	if s.Depth > maxDepth {
		s.Run.Doubt("it nests shells deeper than the guard follows")
		return
	}
	if f := s.Run.Load(src); f != nil {
		f.Name = s.Zero // the interpreter's $0
		s.RunFile(f, dir, params)
	}
}

// Load parses and prepares src for a dry run; nil, with the doubt, when it cannot be run.
func (d *Run) Load(src string) *syntax.File {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		d.Doubt("the guard cannot parse it as bash (" + msg + ")")
		return nil
	}
	prepare(f)
	_, line := d.Judge.(*resolver) // a run line's scripts are the user's: bounded by steps, not length
	if why, stop := tooBig(f, !line); why != "" {
		d.Doubt(why)
		if stop {
			return nil
		}
	}
	return f
}

// prepare makes a script safe to dry-run: jobs run in turn, process substitutions become
// command substitutions (no real FIFOs), escapes quotes, memory checks go in; too deep: deepCall.
func prepare(f *syntax.File) {
	depth, deepest := 0, 0
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			depth--
			return true
		}
		depth++
		deepest = max(deepest, depth)
		switch n := n.(type) {
		case *syntax.Stmt:
			n.Background, n.Disown, n.Coprocess = false, false, false
		case *syntax.Word:
			for i, p := range n.Parts {
				if ps, ok := p.(*syntax.ProcSubst); ok {
					n.Parts[i] = &syntax.CmdSubst{Left: ps.OpPos, Right: ps.Rparen, Stmts: ps.Stmts, Last: ps.Last}
				}
			}
		}
		return deepest <= maxNesting
	})
	if deepest > maxNesting {
		f.Stmts = []*syntax.Stmt{call(deepCall)}
		return
	}
	quoteWordEscapes(f)
	addMemChecks(f)
}

// RunFile dry-runs f in dir; it returns the runner (its variables) unless the run was left behind.
func (s *Shell) RunFile(f *syntax.File, dir string, params []string) *interp.Runner {
	opts := []interp.RunnerOption{
		interp.Env(Environ{Root: s.Run.Root, Home: s.Run.Home, Lenient: s.Pass.Lenient, run: s.Run, Inherit: s.Env}),
		interp.Dir(existingAncestor(dir)), // a missing folder fails the interpreter's start
		interp.StdIO(nil, io.Discard, io.Discard),
		interp.CallHandler(s.call),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return s.exec }),
		interp.OpenHandler(s.open),
		interp.StatHandler(s.stat),
		interp.AccessHandler(s.access),
	}
	flags := []string{"--"}
	if s.NoGlob {
		flags = []string{"-f", "--"}
	}
	r, err := interp.New(append(opts, interp.Params(append(flags, params...)...))...)
	if err != nil {
		s.Run.Doubt("the guard could not start its dry run (" + err.Error() + ")")
		return nil
	}
	left, err := runUntil(r, f, s.Run.deadline)
	switch {
	case errors.Is(err, errMemory):
		s.Run.Doubt(tooMuch)
	case errors.Is(err, errLimit) || errors.Is(err, errStopped):
		s.Run.Doubt(stopped) // an interpreter panic too: judged as a run it could not finish
	}
	if left {
		return nil // still running: not handed out
	}
	return r
}

// runUntil dry-runs f in r until end: a panic ends the run, not the hook; one still going a
// second past end (a read the context cannot stop) is left behind: its runner must not be used.
func runUntil(r *interp.Runner, f *syntax.File, end time.Time) (left bool, err error) {
	ctx, cancel := context.WithDeadline(context.Background(), end)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if recover() != nil {
				done <- errStopped
			}
		}()
		done <- r.Run(ctx, f)
	}()
	timer := time.NewTimer(time.Until(end) + time.Second)
	defer timer.Stop()
	select {
	case err = <-done:
	case <-timer.C:
		return true, errStopped
	}
	if ctx.Err() != nil && !errors.Is(err, errMemory) {
		return false, errStopped
	}
	return false, err
}

const (
	deepCall = "__stopgate_too_deep" // what prepare leaves of a script nested too deep
	tooMuch  = "the guard stopped its dry run: it builds more text than the guard's dry run holds in memory"
	stopped  = "the guard stopped its dry run: it does not finish within the guard's bounds (a loop, or too much work)"
)

func existingAncestor(dir string) string {
	for d := dir; ; d = path.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			return d
		}
		if d == "/" || d == "." {
			return "/"
		}
	}
}

// Environ is a dry run's environment: the root, $HOME, a nested shell's caller's exports, others unset (Lenient) or Unknown.
type Environ struct {
	Root, Home string // $CLAUDE_PROJECT_DIR and $HOME ("": unset)
	Lenient    bool
	run        *Run                       // told when an unknown variable is read; nil in the static pass
	Inherit    expand.Environ             // the caller's environment, for a nested shell; nil at the top
	Vars       map[string]expand.Variable // a finished run's variables, over all else (the static pass)
}

// shellVars are managed by the shell, never taken as unknown.
var shellVars = strings.Fields(`IFS PWD OLDPWD PATH OPTIND OPTARG PS1 PS2 PS3 PS4 SHELLOPTS BASHOPTS RANDOM SECONDS
	LINENO UID EUID GID PPID TMPDIR GLOBIGNORE REPLY BASH_REMATCH DIRSTACK FUNCNAME PIPESTATUS HISTFILE
	BASH_VERSION BASH_VERSINFO HOSTNAME COLUMNS LINES`)

// fixedVars have a dry run's own value. TMPDIR, where the interpreter puts FIFOs past the
// open handler, is Unknown so none exist. PPID is the client's, for the static pass.
var fixedVars = map[string]string{
	"HOME +": "~+", "HOME -": "~-", // kept as written: the judge resolves them against the cwd
	"PATH": "/usr/local/bin:/usr/bin:/bin", "TMPDIR": "/" + Unknown, "PPID": strconv.Itoa(os.Getppid()),
}

func str(v string) expand.Variable {
	return expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: v}
}

func (e Environ) Get(name string) expand.Variable {
	if vr, ok := e.Vars[name]; ok {
		return vr
	}
	if e.Inherit != nil && IsName(name) {
		if vr := e.Inherit.Get(name); vr.Exported && vr.IsSet() {
			return vr // as the caller exported it
		}
	}
	switch {
	case fixedVars[name] != "":
		return str(fixedVars[name])
	case name == "CLAUDE_PROJECT_DIR":
		return str(e.Root)
	case name == "HOME" && e.Home != "":
		return str(e.Home)
	case slices.Contains(shellVars, name) || strings.HasPrefix(name, "HOME ") || !IsName(name):
		return expand.Variable{}
	}
	if e.run != nil {
		e.run.unknownVars.Store(true)
	}
	if e.Lenient {
		return expand.Variable{}
	}
	return str(Unknown)
}

// Each lists each name once, with the value Get gives it: the run's
// variables over the caller's exports (the last of a name), over the fixed
// $CLAUDE_PROJECT_DIR and $HOME. A fixed value listed after the agent's own
// export HOME=$PWD would hide the write env sh -c makes through it.
func (e Environ) Each(f func(name string, vr expand.Variable) bool) {
	all := map[string]expand.Variable{"CLAUDE_PROJECT_DIR": str(e.Root)}
	if e.Home != "" {
		all["HOME"] = str(e.Home)
	}
	if e.Inherit != nil {
		e.Inherit.Each(func(name string, vr expand.Variable) bool {
			if vr.Exported && vr.IsSet() {
				all[name] = vr
			} else {
				delete(all, name)
			}
			return true
		})
	}
	maps.Copy(all, e.Vars)
	for name, vr := range all {
		if !f(name, vr) {
			return
		}
	}
}

// EnvOf returns the environment env's options args give its program.
func EnvOf(caller expand.Environ, args []string) expand.Environ {
	var pairs []string // ListEnviron keeps the last of a name
	if caller != nil {
		caller.Each(func(name string, vr expand.Variable) bool {
			if vr.Exported && vr.IsSet() {
				pairs = append(pairs, name+"="+vr.String())
			}
			return true
		})
	}
	opts, _ := EnvOptions(args)
	for _, o := range opts {
		if o.Has("i", "ignore-environment") {
			pairs = nil
		}
		for _, u := range o.Val("u", "unset") {
			pairs = slices.DeleteFunc(pairs, func(p string) bool { return strings.HasPrefix(p, u+"=") })
		}
		if o.Assign != "" {
			pairs = append(pairs, o.Assign)
		}
	}
	return expand.ListEnviron(pairs...)
}

// call runs before every simple command: bounds, what ran, the builtins the interpreter lacks.
func (s *Shell) call(ctx context.Context, args []string) ([]string, error) {
	hc := interp.HandlerCtx(ctx)
	if args, err, done := s.bound(hc, args); done {
		return args, err
	}
	if s.Top {
		s.Run.with(func() { s.Run.ran[hc.Pos] = true })
	}
	if (args[0] == "builtin" || args[0] == "command") && len(args) > 1 && ownBuiltins[args[1]] {
		args = args[1:]
	}
	switch args[0] {
	case "kill": // the interpreter's fails as unsupported: judged here, a stub with the pass's status
		hc.Stdout = io.Discard
		if err := s.Run.Judge.Exec(s, hc, args); err != nil {
			return nil, err
		}
		return []string{memCheck, strconv.Itoa(int(s.Pass.Status))}, nil
	case "eval":
		return []string{"eval", prepared(strings.Join(args[1:], " "))}, nil
	case "printf":
		return printfV(args), nil
	case "command":
		if len(args) > 1 && args[1] == "-p" {
			return append(args[:1:1], args[2:]...), nil // the interpreter lacks -p
		}
	case "source", ".":
		if len(args) > 1 {
			return s.source(hc, args)
		}
	case "trap": // the interpreter runs only EXIT and ERR traps: judge the action now
		if len(args) > 2 {
			s.Script(args[1], hc.Dir, "", nil, nil)
			if s.Run.Judge.Hit() {
				return nil, ErrHit
			}
			args = append([]string{"trap", prepared(args[1])}, args[2:]...)
		}
	}
	return args, nil
}

// bound answers a call the run's bounds decide: a memCheck with the command passing $? on
// (exec answers it), a call past a bound with its error; done is false for any other.
func (s *Shell) bound(hc interp.HandlerContext, args []string) (_ []string, _ error, done bool) {
	switch {
	case args[0] == deepCall:
		s.Run.Doubt("it nests deeper than the guard's dry run follows")
		return nil, errLimit, true
	case args[0] == memCheck && held(hc.Env) <= maxVars:
		return []string{memCheck, strconv.Itoa(hc.LastExitStatus)}, nil, true
	case args[0] == memCheck || argsTooBig(args) || s.Run.printed.Add(int64(printedBy(args, hc.Env))) > maxPrinted:
		s.Run.Doubt(tooMuch) // here too: a command substitution swallows the error
		return nil, errMemory, true
	case s.Run.steps.Add(1) > maxSteps:
		return nil, errLimit, true
	}
	return nil, nil, false
}

// source runs the file's text as eval, prepared; one not known in full is refused.
func (s *Shell) source(hc interp.HandlerContext, args []string) ([]string, error) {
	p, by := Abs(args[1], hc.Dir), strings.Join(args, " ")
	if r, ok := s.Run.Judge.(*resolver); ok && !r.Source(s, p) { // a run line follows only the project's
		return []string{":"}, nil
	}
	r, err := s.Run.Open(args[1], hc.Dir)
	if err != nil {
		return args, nil
	}
	b, _ := io.ReadAll(r)
	if bytes.Contains(b, []byte(Unknown)) {
		why := "it sources a file the guard cannot read in full (larger than it reads)"
		if s.Run.File(p) != nil {
			why = "it sources a file written in the same call, whose content the guard cannot know"
		}
		if err := s.Run.Judge.Refuse(args[1], by, why); err != nil {
			return nil, err
		}
	}
	s.Run.text(string(b))
	return []string{"eval", prepared(string(b))}, nil
}

// ownBuiltins are the builtins call handles: kill, and those that parse text of their own, prepared.
var ownBuiltins = map[string]bool{"eval": true, "trap": true, "source": true, ".": true, "kill": true}

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

// printfV gives printf -v VAR (the interpreter lacks it) as VAR=$(printf …): a trailing newline dropped hides no name.
func printfV(args []string) []string {
	if len(args) < 4 || args[1] != "-v" || !IsName(strings.SplitN(args[2], "[", 2)[0]) {
		return args
	}
	quoted := make([]string, len(args)-3)
	for i, a := range args[3:] {
		q, err := syntax.Quote(a, syntax.LangBash)
		if err != nil {
			return args
		}
		quoted[i] = q
	}
	return []string{"eval", args[2] + "=$(printf " + strings.Join(quoted, " ") + ")"}
}

// exec is every program: judged, then it exits with the pass's status (or a memCheck's).
func (s *Shell) exec(ctx context.Context, args []string) error {
	status := int(s.Pass.Status)
	if len(args) == 2 && args[0] == memCheck {
		status, _ = strconv.Atoi(args[1])
	} else if err := s.Run.Judge.Exec(s, interp.HandlerCtx(ctx), args); err != nil {
		return err
	}
	if status != 0 {
		return interp.ExitStatus(uint8(status))
	}
	return nil
}

// open judges a redirection: writes are judged and captured; reads see captures or real files.
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
	return s.Run.Open(name, hc.Dir)
}

// stat answers tests and cd from the real files and the captures; an unknown path is a folder.
func (s *Shell) stat(ctx context.Context, name string, follow bool) (fs.FileInfo, error) {
	fi, err := interp.DefaultStatHandler()(ctx, name, follow)
	c := s.Run.File(path.Clean(filepath.ToSlash(name)))
	switch {
	case strings.Contains(name, Unknown) || err != nil && c != nil && c.Dir:
		return fakeInfo{path.Base(name), fs.ModeDir | 0o755}, nil
	case err != nil && c != nil:
		return fakeInfo{path.Base(name), 0o644}, nil
	}
	return fi, err
}

func (s *Shell) access(ctx context.Context, name string, mode interp.AccessMode) error {
	if strings.Contains(name, Unknown) || s.Run.File(path.Clean(filepath.ToSlash(name))) != nil {
		return nil
	}
	return interp.DefaultAccessHandler()(ctx, name, mode)
}

type fakeInfo struct {
	name string
	mode fs.FileMode
}

func (f fakeInfo) Name() string       { return f.name }
func (f fakeInfo) Size() int64        { return 0 }
func (f fakeInfo) Mode() fs.FileMode  { return f.mode }
func (f fakeInfo) ModTime() time.Time { return time.Time{} }
func (f fakeInfo) IsDir() bool        { return f.mode.IsDir() }
func (f fakeInfo) Sys() any           { return nil }

// Stdout is a stub's stdout: past maxPrinted it prints nothing, and the next call stops the run.
func (s *Shell) Stdout(hc interp.HandlerContext) io.Writer { return counted{hc.Stdout, &s.Run.printed} }

type counted struct {
	w io.Writer
	n *atomic.Int64
}

func (c counted) Write(p []byte) (int, error) {
	if c.n.Add(int64(len(p))) > maxPrinted {
		return len(p), nil
	}
	return c.w.Write(p)
}
