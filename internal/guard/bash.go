package guard

import (
	"cmp"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stopgate/stopgate/internal/shell"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// CheckBash judges a Bash command run in cwd by a dry run, then the commands no pass reached on their words (docs/guard.md).
func (s *Set) CheckBash(cmd, cwd string) *Hit {
	if s.Empty() || strings.TrimSpace(cmd) == "" {
		return nil
	}
	d := s.newDryRun(cmd)
	cwd = path.Clean(slash(cwd))
	if d.plain(cmd, cwd) {
		return d.verdict()
	}
	return d.full(cmd, cwd)
}

// plain judges one program on plain words (go test ./...) without a dry run; false for any other cmd.
func (d *dryRun) plain(cmd, cwd string) bool {
	words, ok := shell.PlainWords(cmd)
	if !ok || len(words) == 0 || words[0] == "source" || words[0] == "." {
		return false
	}
	a := d.analyzer(&shell.Shell{Run: d.Run, Pass: shell.Passes[0]}, interp.HandlerContext{Dir: cwd, Stdout: io.Discard, Stderr: io.Discard})
	if h := a.run(a.words(words)); h != nil {
		d.found(h)
	}
	return true
}

// full dry-runs cmd: the passes, then the commands none of them reached.
func (d *dryRun) full(cmd, cwd string) *Hit {
	f := d.Load(cmd)
	if f == nil {
		return d.verdict()
	}
	d.Top = f
	var first *interp.Runner
	branches := steered(f)
	for i, p := range shell.Passes {
		if i > 0 && !branches && !d.UnknownVars() {
			break
		}
		d.ForgetFiles()
		r := (&shell.Shell{Run: d.Run, Pass: p, Top: true}).RunFile(f, cwd, nil)
		if h := d.hit.Load(); h != nil {
			return h
		}
		if i == 0 {
			first = r
		}
	}
	d.ForgetFiles()
	return cmp.Or(d.static(f, first, cwd), d.verdict())
}

// steered reports whether a program's status could steer the state f builds (else one pass sees all).
func steered(f *syntax.File) bool {
	branch, state := false, false
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.IfClause, *syntax.WhileClause, *syntax.CaseClause:
			branch = true
		case *syntax.BinaryCmd:
			branch = branch || n.Op == syntax.AndStmt || n.Op == syntax.OrStmt
		case *syntax.Stmt:
			branch = branch || n.Negated
		case *syntax.Assign, *syntax.DeclClause, *syntax.FuncDecl, *syntax.ArithmCmd, *syntax.ForClause:
			state = true
		case *syntax.CallExpr:
			state = state || len(n.Args) > 0 && slices.Contains(stateBuiltins, n.Args[0].Lit())
		}
		return !(branch && state)
	})
	return branch && state
}

var stateBuiltins = strings.Fields("cd pushd popd read mapfile readarray set shift source . eval printf unset let getopts export alias trap shopt")

// verdict is the answer once nothing hit: a doubt denies text naming a protected path.
func (d *dryRun) verdict() *Hit {
	if h := d.hit.Load(); h != nil {
		return h
	}
	doubts, texts := d.Doubts(), d.Texts()
	if len(doubts) == 0 {
		return nil
	}
	for _, t := range texts {
		if tg := d.set.mentions(t); tg != nil {
			return &Hit{Protected: tg.Protected, By: texts[0], Why: doubts[0], doubt: true}
		}
	}
	return nil
}

// static judges the statements of f no dry run reached, with the variables r ended with.
func (d *dryRun) static(f *syntax.File, r *interp.Runner, cwd string) *Hit {
	env := shell.Environ{Root: d.set.root, Home: d.set.home, Lenient: true}
	if r != nil {
		env.Vars, cwd = r.Vars, cmp.Or(r.Dir, cwd)
	}
	cfg := &expand.Config{
		Env: env,
		CmdSubst: func(w io.Writer, _ *syntax.CmdSubst) error {
			_, err := io.WriteString(w, shell.Unknown)
			return err
		},
		ProcSubst: func(*syntax.ProcSubst) (string, error) { return shell.Unknown, nil },
		ReadDir2:  os.ReadDir,
	}
	a := d.analyzer(&shell.Shell{Run: d.Run, Pass: shell.Passes[0]}, interp.HandlerContext{Env: env, Dir: cwd, Stdout: io.Discard, Stderr: io.Discard})
	var hit *Hit
	syntax.Walk(f, func(n syntax.Node) bool {
		if st, ok := n.(*syntax.Stmt); ok && hit == nil {
			hit = a.statement(st, cfg)
		}
		return hit == nil
	})
	return hit
}

// statement judges st unless a dry run ran it: its redirections, its command.
func (a *analyzer) statement(st *syntax.Stmt, cfg *expand.Config) *Hit {
	call, _ := st.Cmd.(*syntax.CallExpr)
	if call != nil && len(call.Args) > 0 && a.d.Ran(call.Args[0].Pos()) {
		return nil
	}
	for _, t := range writes(st, cfg) {
		a.by = "> " + t
		if h := a.target(a.word(t), under); h != nil {
			return h
		}
	}
	if call == nil {
		return nil
	}
	if args, err := expand.Fields(cfg, call.Args...); err == nil && len(args) > 0 {
		a.by = strings.Join(args, " ")
		return cmp.Or(a.run(a.words(args)), a.d.hit.Load())
	}
	return nil
}

// writes are the files the redirections of st write, expanded with cfg.
func writes(st *syntax.Stmt, cfg *expand.Config) []string {
	var out []string
	for _, rd := range st.Redirs {
		lit := rd.Word.Lit() // >&FILE writes FILE, >&2 and >&- do not
		file := slices.Contains(fileWrites, rd.Op) || rd.Op == syntax.DplOut && lit != "-" && strings.Trim(lit, "0123456789") != ""
		if t, err := expand.Literal(cfg, rd.Word); file && err == nil {
			out = append(out, t)
		}
	}
	return out
}

var fileWrites = []syntax.RedirOperator{syntax.RdrOut, syntax.AppOut, syntax.RdrAll, syntax.AppAll, syntax.RdrClob, syntax.RdrInOut}

// analyzer judges one program call in the shell state hc gives.
type analyzer struct {
	sh    *shell.Shell
	d     *dryRun
	hc    interp.HandlerContext
	cwd   string // "" when unknown (cd "$X")
	by    string // the command, for messages
	input func() []byte
}

func (d *dryRun) analyzer(s *shell.Shell, hc interp.HandlerContext) *analyzer {
	a := &analyzer{sh: s, d: d, hc: hc, cwd: path.Clean(slash(hc.Dir))}
	a.input = sync.OnceValue(func() []byte { // read once, bounded
		if hc.Stdin == nil {
			return nil
		}
		in, _ := io.ReadAll(io.LimitReader(hc.Stdin, shell.MaxRead))
		return in
	})
	if strings.Contains(hc.Dir, shell.Unknown) {
		a.cwd = ""
	}
	return a
}

// word is an expanded argument as judged: ~+ and ~- (which expand leaves alone) are the cwd and $OLDPWD.
func (a *analyzer) word(t string) string {
	if rest, ok := strings.CutPrefix(t, "~+"); ok && (rest == "" || rest[0] == '/') {
		t = a.hc.Dir + rest
	} else if rest, ok := strings.CutPrefix(t, "~-"); ok && (rest == "" || rest[0] == '/') && a.hc.Env != nil {
		if old := a.hc.Env.Get("OLDPWD"); old.IsSet() {
			t = old.String() + rest
		}
	}
	return t
}

func (a *analyzer) words(args []string) []string {
	out := make([]string, len(args))
	for i, t := range args {
		out[i] = a.word(t)
	}
	return out
}

// glob is w as a clean glob pattern: glob characters left matched nothing, others are literal.
func glob(w string) string {
	if hasMeta(w) {
		return w
	}
	return escape(w)
}

func unknown(w string) bool { return strings.Contains(w, shell.Unknown) }

// target judges an operation in mode m on the path w names. In the lenient pass an unset variable may have
// emptied a path ("$BUILD"/*): only one in the project or under a protected one counts.
func (a *analyzer) target(w string, m mode) *Hit {
	if unknown(w) || w == "" {
		return nil
	}
	if h := a.procPath(w); h != nil {
		return h
	}
	bases := []string{a.cwd}
	if strings.HasPrefix(glob(w), "/") {
		bases = []string{"/"}
	} else if a.cwd == "" {
		bases = a.d.set.cwds // a cd to somewhere unknown: wherever it could reach a protected path from
	}
	for _, b := range bases {
		abs := shell.Abs(glob(w), escape(b))
		t := a.d.set.hit(abs, m)
		if t == nil {
			continue
		}
		if a.sh.Pass.Lenient && !shell.Within(shell.Unescape(abs), a.d.set.root) && a.d.set.hit(abs, under) == nil {
			continue
		}
		return &Hit{Protected: t.Protected, Target: w, By: a.by}
	}
	return nil
}

func first[T any](xs []T, f func(T) *Hit) *Hit {
	for _, x := range xs {
		if h := f(x); h != nil {
			return h
		}
	}
	return nil
}

// abs is the path w names from the cwd, which must be known.
func (a *analyzer) abs(w string) string { return shell.Unescape(shell.Abs(glob(w), escape(a.cwd))) }

func (a *analyzer) mention(code string) *Hit {
	if t := a.d.set.mentions(code); t != nil {
		return &Hit{Protected: t.Protected, By: a.by}
	}
	return nil
}

func (a *analyzer) script(src, zero string, params []string) *Hit {
	dir := a.hc.Dir
	if a.cwd == "" || dir == "" {
		dir = a.d.set.root
	}
	a.sh.Script(src, dir, zero, a.hc.Env, params)
	return a.d.hit.Load()
}

// run judges one program call, its expanded words ws, by its name.
func (a *analyzer) run(ws []string) *Hit {
	if len(ws) == 0 {
		return nil
	}
	if a.by == "" {
		a.by = strings.Join(ws, " ")
	}
	if args, ok := gateCall(ws); ok { // before the unknown: "$PLUGIN"/bin/gate is gate
		if h := gateRule(a, args); h != nil {
			return h
		}
	}
	for i, w := range ws[1:] { // npx -c CODE and the like run a shell's code
		if !slices.Contains(strings.Fields("npx npm pnpx pnpm"), path.Base(ws[0])) {
			break
		}
		if code, ok := strings.CutPrefix(w, "--call="); ok {
			return a.script(code, "", nil)
		}
		if (w == "-c" || w == "--call") && i+2 < len(ws) {
			return a.script(ws[i+2], "", nil)
		}
	}
	if unknown(ws[0]) {
		return nil
	}
	if len(ws[0]) > 1 && ws[0][0] == '-' { // time's options: bash's keyword leaves them, dash runs GNU time; "-" is a program
		return timeRule(a, ws)
	}
	name := path.Base(ws[0])
	args := ws[1:]
	if a.d.readSeen != nil {
		if name == "find" {
			a.findReads(parseFind(args))
		} else if r, ok := readRules()[name]; ok {
			for _, w := range r.operands(args) {
				if !unknown(w) && !strings.Contains(w, "{}") { // {} is recorded as its files are known (findReads, xargs)
					a.d.read(a, w)
				}
			}
		}
	}
	if r, ok := rules()[name]; ok {
		return r(a, args) // before the wrappers: ionice and the like wrap a command unless given a pid
	}
	if h, ok := a.unwrap(name, args); ok {
		return h
	}
	if base, ok := shell.Interpreter(name); ok {
		return a.interpreter(base, args) // python3.12 as python, php8.2 as php
	}
	if h := first(args, a.mention); h != nil && slices.Contains(otherInterpreters, shell.Unversioned(name)) {
		h.Why, h.doubt = "it runs "+name+", an interpreter the guard does not follow", true
		return h
	}
	if strings.Contains(ws[0], "/") {
		return a.written(ws[0], args)
	}
	return nil
}

// unwrap judges the command the wrapper name runs; false when name wraps none.
func (a *analyzer) unwrap(name string, args []string) (*Hit, bool) {
	skip, ok := shell.Skip(name, args)
	switch {
	case !ok:
		return nil, false
	case name == "env":
		return a.env(args[:skip], args[skip:]), true
	case skip < 0 || skip >= len(args):
		return nil, true
	}
	return a.run(args[skip:]), true
}

// written judges running a script this call wrote: its text, or a doubt.
func (a *analyzer) written(prog string, args []string) *Hit {
	p := shell.Unescape(shell.Abs(glob(prog), escape(a.hc.Dir)))
	c := a.d.File(p)
	if c == nil || c.Dir {
		return nil
	}
	if c.Unknown() {
		return &Hit{Target: prog, By: a.by, doubt: true,
			Why: "it runs a script written in the same call, whose content the guard cannot know"}
	}
	return a.script(c.Text(), "", args)
}

// each judges every word in mode m, remembering a path written.
func (a *analyzer) each(ws []string, m mode) *Hit {
	for _, w := range ws {
		if h := a.target(w, m); h != nil {
			return h
		}
		if m == under && !unknown(w) && a.cwd != "" && w != "" {
			a.d.Wrote(a.abs(w), false)
		}
	}
	return nil
}

const maxItems = 64 // xargs items judged

// dryRun is the shell.Judge of one CheckBash call, passes and nested shells.
type dryRun struct {
	*shell.Run
	set *Set

	mu       sync.Mutex
	hit      atomic.Pointer[Hit]
	reads    []string            // what the run reads ShellReads, in order
	readSeen map[string]bool     // nil when not recording reads
	lockable atomic.Pointer[Hit] // a protected file a redirection opened, which flock FD would lock
}

func (s *Set) newDryRun(cmd string) *dryRun {
	d := &dryRun{set: s}
	d.Run = shell.NewRun(cmd, s.root, s.home, d)
	return d
}

func (d *dryRun) found(h *Hit) { d.hit.CompareAndSwap(nil, h) }
func (d *dryRun) Hit() bool    { return d.hit.Load() != nil }

// Refuse records a hit of doubt: the run cannot know what target holds.
func (d *dryRun) Refuse(target, by, why string) error {
	d.found(&Hit{Target: target, By: by, Why: why, doubt: true})
	return shell.ErrHit
}

// Exec judges a program call, and prints its stub's output.
func (d *dryRun) Exec(s *shell.Shell, hc interp.HandlerContext, args []string) error {
	a := d.analyzer(s, hc)
	ws := a.words(args)
	if h := a.run(ws); h != nil {
		d.found(h)
	}
	if d.Hit() {
		return shell.ErrHit
	}
	a.output(ws)
	return nil
}

// output writes what a stub prints: cat and tee their input, ls and find their operands, else Unknown.
func (a *analyzer) output(ws []string) {
	out := a.sh.Stdout(a.hc)
	name := path.Base(ws[0])
	if unknown(ws[0]) {
		name = ""
	}
	switch files := shell.Parse(ws[1:], "").Ops; name {
	case "cat":
		if len(files) == 0 {
			files = []string{"-"}
		}
		for _, w := range files {
			if w == "-" {
				out.Write(a.input())
			} else if unknown(w) {
				io.WriteString(out, shell.Unknown+"\n")
			} else if r, err := a.d.Open(w, a.hc.Dir); err == nil {
				io.Copy(out, r)
			}
		}
		return
	case "tee":
		out.Write(a.input())
		for _, w := range files {
			if !unknown(w) {
				a.d.Captured(shell.Abs(w, a.hc.Dir), a.input())
			}
		}
		return
	case "ls", "find":
		for _, w := range ws[1:] {
			if !strings.HasPrefix(w, "-") {
				io.WriteString(out, w+"\n")
			}
		}
	}
	io.WriteString(out, shell.Unknown+"\n")
}

// Write judges a redirection that writes name: a protected path is a hit.
func (d *dryRun) Write(s *shell.Shell, hc interp.HandlerContext, name string) (string, bool, error) {
	a := d.analyzer(s, hc)
	a.by = "> " + name
	w := a.word(name)
	if h := a.target(w, under); h != nil {
		h.By = d.redirectBy(name, hc.Env, h.By)
		d.found(h)
		return "", false, shell.ErrHit
	}
	return w, !unknown(w), nil
}

// Read records a redirection that reads name, and one of a protected file (flock FD locks it).
func (d *dryRun) Read(s *shell.Shell, hc interp.HandlerContext, name string) {
	a := d.analyzer(s, hc)
	d.read(a, name)
	if h := a.target(a.word(name), under); h != nil && !h.proc {
		d.lockable.Store(h)
	}
}

// redirectBy is the top script's statement whose redirection names name, else def.
func (d *dryRun) redirectBy(name string, env expand.Environ, def string) string {
	by := def
	syntax.Walk(d.Top, func(n syntax.Node) bool { // Top is set before any run
		if st, ok := n.(*syntax.Stmt); ok && by == def && slices.Contains(writes(st, &expand.Config{Env: env}), name) {
			by = d.Src[st.Pos().Offset():st.End().Offset()]
		}
		return by == def
	})
	return by
}

// env judges what env runs in the environment it gives, and -S's script.
func (a *analyzer) env(opts, rest []string) *Hit {
	a.hc.Env = shell.EnvOf(a.hc.Env, opts)
	parsed, _ := shell.EnvOptions(opts)
	for _, o := range parsed {
		if split := o.Val("S", "split-string"); len(split) > 0 {
			return first(split, func(s string) *Hit { return a.script(s+` "$@"`, "env", rest) })
		}
	}
	return a.run(rest)
}
