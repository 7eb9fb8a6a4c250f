package guard

import (
	"io"
	"path"
	"strings"
	"sync"

	"github.com/stopgate/stopgate/internal/shell"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// The guard judges a Bash command by dry-running it in internal/shell's
// interpreter: dryRun is the shell.Judge every program, redirection and
// source of the run is put to, by the policy table (rules.go).

// unknownMark stands for a value the dry run cannot know: a variable the
// command does not set (in the marking pass), the output of a program it
// does not run. A word that holds it is not judged.
const unknownMark = shell.Unknown

const maxItems = 64 // xargs items judged

// dryRun is the state one CheckBash call shares across its passes and its
// nested shells: the shell's, and what the guard found.
type dryRun struct {
	*shell.Run
	set *Set

	mu  sync.Mutex
	hit *Hit
	// recording: the run records what it reads (ShellReads), in order.
	recording bool
	reads     []string
	readSeen  map[string]bool
	// lockable is set when a redirection opened a protected file for
	// reading: flock on a descriptor then holds the gate's lock.
	lockable *Hit
}

// newDryRun is the state of one analysis of cmd.
func (s *Set) newDryRun(cmd string) *dryRun {
	d := &dryRun{set: s}
	d.Run = shell.NewRun(cmd, s.root, s.home, d)
	return d
}

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

// Hit reports whether the run found a hit.
func (d *dryRun) Hit() bool { return d.hitNow() != nil }

// Refuse records a hit of doubt: the run cannot know what target holds.
func (d *dryRun) Refuse(target, by, why string) error {
	d.found(&Hit{Target: target, By: by, Why: why, doubt: true})
	return shell.ErrHit
}

// Kill judges the builtin kill.
func (d *dryRun) Kill(s *shell.Shell, hc interp.HandlerContext, args []string) error {
	a := d.analyzer(s, hc)
	if h := a.run(a.words(args)); h != nil {
		d.found(h)
		return shell.ErrHit
	}
	return nil
}

// Exec judges a program by the policy table, then prints its stub's
// output.
func (d *dryRun) Exec(s *shell.Shell, hc interp.HandlerContext, args []string) error {
	a := d.analyzer(s, hc)
	ws := a.words(args)
	if h := a.run(ws); h != nil {
		d.found(h)
		return shell.ErrHit
	}
	if d.hitNow() != nil {
		return shell.ErrHit // found by a nested shell of this program
	}
	a.output(ws)
	return nil
}

// output writes what the stub of a program prints: cat and tee their
// input, ls and find their operands, anything else a value the guard
// cannot know.
func (a *analyzer) output(ws []word) {
	out := a.sh.Stdout(a.hc)
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
				a.d.Captured(shell.Abs(w.text, a.hc.Dir), in)
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
	return w.text, !w.unknown, nil
}

// Read records a redirection that reads name, and a descriptor it opens
// on a protected file, which flock could hold.
func (d *dryRun) Read(s *shell.Shell, hc interp.HandlerContext, name string) {
	a := d.analyzer(s, hc)
	d.read(a, name)
	if h := a.target(a.word(name), under); h != nil && !h.proc {
		d.mu.Lock()
		d.lockable = h
		d.mu.Unlock()
	}
}

// redirectBy is the statement of the top script whose redirection
// names name, for the reason; def when none does (a nested script).
func (d *dryRun) redirectBy(name string, env expand.Environ, def string) string {
	if d.Top == nil {
		return def
	}
	cfg := &expand.Config{Env: env}
	by := def
	syntax.Walk(d.Top, func(n syntax.Node) bool {
		st, ok := n.(*syntax.Stmt)
		if !ok || by != def {
			return by == def
		}
		for _, rd := range st.Redirs {
			if t, err := expand.Literal(cfg, rd.Word); err == nil && writesFile(rd) && t == name {
				by = d.Src[st.Pos().Offset():st.End().Offset()]
				return false
			}
		}
		return true
	})
	return by
}

// env judges what env runs: the program after its options, in the
// environment they give it (env f=mappings.toml sh -c 'rm "$f"'); with -S
// (--split-string), the command its text splits into, before the rest,
// dry-run as the shell would read that text.
func (a *analyzer) env(opts, rest []word) *Hit {
	a.hc.Env = shell.EnvOf(a.hc.Env, texts(opts))
	parsed, _ := shell.EnvOptions(texts(opts))
	for _, o := range parsed {
		if o.Name == "S" {
			return a.script(o.Value+` "$@"`, "env", texts(rest), nil)
		}
	}
	return a.run(rest)
}
