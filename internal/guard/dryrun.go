package guard

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stopgate/stopgate/internal/runline"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// A dry run executes a Bash command in mvdan.cc/sh's interpreter with
// nothing real behind it: every program is a stub that the policy table
// (rules.go) judges with its expanded arguments, every open for writing is
// judged and captured in memory, and reads see the real files (reading is
// never denied). Builtins, functions, variables, arrays, cd, read,
// printf -v, eval, trap and the rest run as in bash, so what the shell
// resolves without running anything is resolved here too.

// unknownMark stands for a value the dry run cannot know: a variable the
// command does not set (in the marking pass), the output of a program it
// does not run. A word that holds it is not judged.
const unknownMark = runline.Unknown

// Bounds of one dry run: a command that needs more is judged
// conservatively (see doubt).
const (
	maxSteps    = 4000        // simple commands run, over all passes of one call
	maxDepth    = 8           // shells nested in shells (sh -c, sh FILE, a pipe into sh)
	maxRead     = 1 << 20     // bytes read from one file, stdin or captured write
	dryDeadline = time.Second // wall time of all passes of one call, never reached by sane input
	maxItems    = 64          // xargs items judged
)

var (
	errHit   = errors.New("guard: protected path hit")
	errLimit = errors.New("guard: dry run over its bounds")
)

// pass is one dry run of a command: unknown variables are unset (lenient)
// or unknownMark, programs exit with status.
type pass struct {
	lenient bool
	status  uint8
}

var passes = []pass{{lenient: true, status: 0}, {lenient: false, status: 1}}

// dryRun is the state one CheckBash call shares across its passes and its
// nested shells.
type dryRun struct {
	set      *Set
	steps    atomic.Int64
	printed  atomic.Int64 // bytes builtins and stubs printed (runline.MaxPrinted)
	deadline time.Time    // of all passes
	src      string       // the command
	top      *syntax.File // the command parsed
	// unknownVars is set once the command reads a variable it does not
	// set: only then, or when a program's status steers it, does the
	// second pass see anything the first did not.
	unknownVars atomic.Bool

	mu     sync.Mutex
	hit    *Hit
	doubts []string // why part of the command could not be followed
	texts  []string // every script seen, for the conservative mention check
	files  map[string]*capture
	ran    map[syntax.Pos]bool // simple commands of the top script that ran
	// recording: the run records what it reads (ShellReads), in order.
	recording bool
	reads     []string
	readSeen  map[string]bool
	// lockable is set when a redirection opened a protected file for
	// reading: flock on a descriptor then holds the gate's lock.
	lockable *Hit
}

// capture is a file written during the dry run: its content when known.
type capture struct {
	buf   bytes.Buffer
	known bool
	dir   bool
}

func (c *capture) Write(p []byte) (int, error) {
	if c.buf.Len()+len(p) <= maxRead {
		c.buf.Write(p)
	} else {
		c.known = false
	}
	return len(p), nil
}

// unknown reports whether part of the content is not known.
func (c *capture) unknown() bool {
	return !c.known || bytes.Contains(c.buf.Bytes(), []byte(unknownMark))
}

func (c *capture) Read([]byte) (int, error) { return 0, io.EOF }
func (c *capture) Close() error             { return nil }

type reader struct{ io.Reader }

func (reader) Write(p []byte) (int, error) { return len(p), nil }
func (reader) Close() error                { return nil }

func (d *dryRun) found(h *Hit) {
	d.mu.Lock()
	if d.hit == nil {
		d.hit = h
	}
	d.mu.Unlock()
}

// hitNow is the hit found so far, if any.
func (d *dryRun) hitNow() *Hit {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.hit
}

func (d *dryRun) doubt(why string) {
	d.mu.Lock()
	d.doubts = append(d.doubts, why)
	d.mu.Unlock()
}

func (d *dryRun) text(s string) {
	d.mu.Lock()
	d.texts = append(d.texts, s)
	d.mu.Unlock()
}

func (d *dryRun) file(p string) *capture {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.files[p]
}

// wrote records that p was written with content it does not know (a
// program's output file), unless it has a capture already.
func (d *dryRun) wrote(p string, dir bool) {
	d.mu.Lock()
	if d.files[p] == nil {
		d.files[p] = &capture{dir: dir}
	}
	d.mu.Unlock()
}

// shell is one interpreter in a dry run: the top script or a nested shell.
type shell struct {
	d     *dryRun
	p     pass
	depth int
	top   bool
	zero  string         // $0 of a nested shell
	env   expand.Environ // what a nested shell inherits: its caller's exported variables
}

// run parses and dry-runs src in dir with positional params and stdin,
// recording hits and doubts in s.d.
func (s *shell) run(src, dir string, params []string, stdin io.Reader) {
	s.d.text(src)
	if s.depth > maxDepth {
		s.d.doubt("it nests shells deeper than the guard follows")
		return
	}
	if f := s.d.load(src); f != nil {
		f.Name = s.zero // the interpreter's $0
		s.runFile(f, dir, params, stdin)
	}
}

// load parses and prepares src for a dry run; nil, with the doubt, when it
// cannot be run.
func (d *dryRun) load(src string) *syntax.File {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(src), "")
	if err != nil {
		msg, _, _ := strings.Cut(err.Error(), "\n")
		d.doubt("the guard cannot parse it as bash (" + msg + ")")
		return nil
	}
	prepare(f)
	if why := tooBig(f); why != "" {
		d.doubt(why)
		return nil
	}
	if runline.Anchored(f) {
		d.doubt("it uses an anchored replacement (${x/#…/…}, ${x/%…/…}), which the guard's dry run does not apply")
	}
	return f
}

// prepare makes the script safe and complete to dry-run: background jobs
// run in turn (so their calls are judged before the run ends), and process
// substitutions become command substitutions (the interpreter would make
// real FIFOs for them, which a stub never opens). A script nested deeper
// than runline.MaxNesting becomes one call of tooDeep, which stops the run
// with that doubt: every pass over it would cost more with its depth.
func prepare(f *syntax.File) {
	if runline.TooDeep(f) {
		f.Stmts = []*syntax.Stmt{{Cmd: &syntax.CallExpr{Args: []*syntax.Word{{Parts: []syntax.WordPart{&syntax.Lit{Value: tooDeep}}}}}}}
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
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
		return true
	})
	runline.Prepare(f)
}

func (s *shell) runFile(f *syntax.File, dir string, params []string, stdin io.Reader) *interp.Runner {
	opts := []interp.RunnerOption{
		interp.Env(environ{set: s.d.set, lenient: s.p.lenient, d: s.d, inherit: s.env}),
		interp.Dir(dir),
		interp.StdIO(stdin, io.Discard, io.Discard),
		interp.CallHandler(s.call),
		interp.ExecHandlers(func(interp.ExecHandlerFunc) interp.ExecHandlerFunc { return s.exec }),
		interp.OpenHandler(s.open),
		interp.StatHandler(s.stat),
		interp.AccessHandler(s.access),
		interp.ReadDirHandler2(func(_ context.Context, p string) ([]fs.DirEntry, error) { return os.ReadDir(p) }),
	}
	if len(params) > 0 {
		opts = append(opts, interp.Params(append([]string{"--"}, params...)...))
	}
	r, err := interp.New(opts...)
	if err != nil && dir != existingAncestor(dir) {
		opts[1] = interp.Dir(existingAncestor(dir))
		r, err = interp.New(opts...)
	}
	if err != nil {
		s.d.doubt("the guard could not start its dry run (" + err.Error() + ")")
		return nil
	}
	left, err := runline.Run(r, f, s.d.deadline)
	switch {
	case errors.Is(err, runline.ErrMemory):
		s.d.doubt(tooMuch)
	case errors.Is(err, errLimit) || errors.Is(err, runline.ErrStopped):
		s.d.doubt(stopped) // an interpreter panic too: judged as a run it could not finish
	}
	if left {
		return nil // still running: not handed out
	}
	return r
}

// tooDeep is the command prepare leaves of a script nested too deep.
const tooDeep = "__stopgate_too_deep"

// tooMuch is the doubt of a run stopped at runline.MaxVars.
const tooMuch = "the guard stopped its dry run: it builds more text than the guard's dry run holds in memory"

const stopped = "the guard stopped its dry run: it does not finish within the guard's bounds (a loop, or too much work)"

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
