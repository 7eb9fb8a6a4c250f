// Package guard keeps the agent that stopgate checks from changing its own
// checks: it decides whether a tool call would write a protected path (the
// state dir, the config, the validators) before the tool runs. A file
// tool's path is judged resolved; a Bash command is dry-run in package
// shell, its programs judged by the policy table (rules.go). See
// docs/guard.md. The detect hook turns a Hit into the client's "deny" and
// says nothing otherwise, so the user's own permission prompts still apply.
package guard

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/shell"
)

// Tools are the tools whose calls the guard judges.
var Tools = []string{"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"}

// Guards reports whether tool is one of Tools.
func Guards(tool string) bool { return slices.Contains(Tools, tool) }

// Protected is one protected path and why it is protected.
type Protected struct {
	Path string // absolute and clean
	Show string // as shown to the agent: relative to the root when inside it
	Why  string // what it is to stopgate, for the reason
	Dir  bool   // a folder even before it exists (the state dir)
	// Planted marks a path guarded against being created: while it does
	// not exist, removing a folder above it is no hit. It is the guard's
	// alone (not in Paths): Claude Code's sandbox would make the nearest
	// absent folder above it read-only, stopping npm install.
	Planted bool
}

// Set is the protected paths of one project.
type Set struct {
	root    string
	home    string
	targets []target
	cwds    []string // where a relative path may start from an unknown cwd

	envTitle string
	envFile  EnvFile
}

// EnvFile is how the client loads .env files into every hook's environment
// (trust.DotEnvWrite): for a file p and the text a write leaves there, the
// file as shown and the hooks' variables it would set; none lets it by.
type EnvFile func(p string, text func() string) (show string, env []string)

// LoadsEnv makes s deny a Write or Edit that makes a .env the client
// (title) loads set a variable of the hooks' environment.
func (s *Set) LoadsEnv(title string, f EnvFile) { s.envTitle, s.envFile = title, f }

type target struct {
	Protected
	rel  string // root-relative, for mentions in code; "" outside the root
	real string // Path with symlinks resolved, when that differs
}

// New returns the set protecting ps in the project at root. home expands ~
// in commands ("" leaves ~ unknown).
func New(root, home string, ps []Protected) *Set {
	s := &Set{root: slash(root), home: slash(home)}
	seen := map[string]bool{}
	cwds := map[string]bool{}
	for _, p := range ps {
		p.Path = path.Clean(slash(p.Path))
		if seen[p.Path] {
			continue
		}
		seen[p.Path] = true
		t := target{Protected: p}
		t.rel, _ = rel(s.root, p.Path)
		t.Show = cmp.Or(p.Show, t.rel, p.Path)
		if real := resolve(p.Path); real != p.Path {
			t.real = real
		}
		s.targets = append(s.targets, t)
		for d, prev := path.Dir(p.Path), ""; d != prev; d, prev = path.Dir(d), d { // its folders
			if !cwds[d] {
				cwds[d] = true
				s.cwds = append(s.cwds, d)
			}
		}
	}
	return s
}

// Empty reports whether nothing is protected.
func (s *Set) Empty() bool { return s == nil || len(s.targets) == 0 }

// Paths returns the protected paths, in order, but the Planted ones.
func (s *Set) Paths() []Protected {
	var out []Protected
	for _, t := range s.targets {
		if !t.Planted {
			out = append(out, t.Protected)
		}
	}
	return out
}

// Hit is a tool call that would write to a protected path.
type Hit struct {
	Protected Protected
	Tool      string // Write, Edit, …, Bash
	Target    string // the path as the call named it
	By        string // for Bash, the command that would write it
	Why       string // a doubt's reason, or a hit that is not a write; "" for a write
	doubt     bool   // judged conservatively: no write was seen
	proc      bool   // it acts on a process (process.go), not on a path
	advice    string // what to do instead, when not the default
}

// Reason is the permissionDecisionReason: what is protected, why, and what
// to do instead.
func (h *Hit) Reason() string {
	var b strings.Builder
	show := h.Protected.Show
	switch {
	case h.doubt && show != "":
		fmt.Fprintf(&b, "stopgate denied this %s call: %s, and it names %s", h.Tool, h.Why, show)
	case h.doubt || h.Why != "":
		fmt.Fprintf(&b, "stopgate denied this %s call: %s", h.Tool, h.Why)
	default:
		fmt.Fprintf(&b, "stopgate denied this %s call: it would change %s", h.Tool, show)
		if h.Target != "" && h.Target != show && h.Target != h.Protected.Path {
			fmt.Fprintf(&b, " (through %s)", h.Target)
		}
	}
	if h.By != "" {
		fmt.Fprintf(&b, " with `%s`", cli.Clip(cli.OneLine(h.By), 120, "…"))
	}
	b.WriteString(". ")
	if h.advice != "" {
		return b.String() + h.advice
	}
	if h.doubt {
		b.WriteString("The guard judges what it cannot follow to the end conservatively. ")
	}
	if show != "" {
		fmt.Fprintf(&b, "%s is protected: %s, and the agent being checked must not change its own checks. ", show, h.Protected.Why)
	}
	if h.doubt {
		b.WriteString("If the command does not change it, run its steps as separate plain commands; ")
	}
	b.WriteString("Do not try another way to change it. If it really needs to change, ask the user to change it. Reading it is allowed (Read, cat, grep, gate status).")
	return b.String()
}

// Check judges one PreToolUse call of tool with its tool_input; relative
// paths resolve against cwd (the root when empty). nil lets it through.
func (s *Set) Check(tool string, in hook.ToolInput, cwd string) *Hit {
	if s == nil || !Guards(tool) {
		return nil
	}
	if cwd == "" {
		cwd = s.root
	}
	var h *Hit
	switch tool {
	case "Write", "Edit":
		if h = s.CheckPath(in.FilePath, cwd); h == nil {
			h = s.envWrite(tool, in, cwd)
		}
	case "Bash":
		h = s.CheckBash(in.Command, cwd)
	case "NotebookEdit":
		h = s.CheckPath(in.NotebookPath, cwd)
	default:
		h = s.CheckPath(in.FilePath, cwd)
	}
	if h != nil {
		h.Tool = tool
	}
	return h
}

// envWrite judges a Write or Edit by the text it leaves in a loaded .env:
// an Edit's is the file with every old_string replaced.
func (s *Set) envWrite(tool string, in hook.ToolInput, cwd string) *Hit {
	if s.envFile == nil || in.FilePath == "" {
		return nil
	}
	p := filepath.Join(cwd, in.FilePath)
	if filepath.IsAbs(in.FilePath) {
		p = in.FilePath
	}
	show, env := s.envFile(p, func() string { // read only for a loaded .env
		if tool == "Write" {
			return in.Content
		}
		if in.OldString == "" {
			return in.NewString
		}
		old, _ := os.ReadFile(p) // absent: the edit creates it from new_string
		return strings.ReplaceAll(string(old), in.OldString, in.NewString)
	})
	if len(env) == 0 {
		return nil
	}
	vars := strings.Join(env, ", ")
	return &Hit{Target: in.FilePath, Why: "it would make " + show + " set " + vars + ", which " + s.envTitle +
		" loads into its environment and hands every hook and validator: it would choose the programs they run",
		advice: "Keep the app's own variables there; if " + vars + " is really needed, ask the user to set it in the shell that starts the client."}
}

// CheckPath judges a write to the file p, relative to cwd unless absolute.
func (s *Set) CheckPath(p, cwd string) *Hit {
	if s.Empty() || p == "" {
		return nil
	}
	abs := path.Clean(slash(p))
	if !strings.HasPrefix(abs, "/") {
		abs = shell.Abs(abs, slash(cwd))
	}
	if t := s.hit(abs, false, under); t != nil {
		return &Hit{Protected: t.Protected, Target: p}
	}
	return nil
}

// hit returns the target an operation in mode m on p (a pattern when glob)
// reaches, as written or with symlinks resolved.
func (s *Set) hit(p string, glob bool, m mode) *target {
	reaches, resolved := pathHit, resolve
	if glob {
		reaches, resolved = globHit, resolvePattern
	}
	forms := []string{p}
	if r := resolved(p); r != p {
		forms = append(forms, r)
	}
	for i := range s.targets {
		t := &s.targets[i]
		for _, f := range forms {
			for _, prot := range []string{t.Path, t.real} {
				if prot == "" || !reaches(f, prot, m) {
					continue
				}
				if m == destroy && t.Planted && !reaches(f, prot, under) && absent(prot) {
					continue // removing a folder above a Planted path that is not there
				}
				return t
			}
		}
	}
	return nil
}

// mentions returns the target whose path text appears in code.
func (s *Set) mentions(code string) *target {
	for i := range s.targets {
		t := &s.targets[i]
		if strings.Contains(code, t.Path) || t.rel != "" && t.rel != "." && strings.Contains(code, t.rel) {
			return t
		}
	}
	return nil
}

func rel(root, p string) (string, bool) {
	r, err := filepath.Rel(root, p)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "", false
	}
	return filepath.ToSlash(r), true
}

func slash(p string) string { return filepath.ToSlash(p) }

// absent reports whether nothing is at p, not even a dangling symlink.
func absent(p string) bool {
	_, err := os.Lstat(filepath.FromSlash(p))
	return errors.Is(err, fs.ErrNotExist)
}

// mode is how an operation reaches a protected path P: a write hits P and
// what lies under it; a removal (rm, mv away, chmod) P's ancestors too.
type mode uint8

const (
	under mode = iota
	destroy
)

// pathHit reports whether an operation in mode m on p reaches prot.
func pathHit(p, prot string, m mode) bool {
	return shell.Within(p, prot) || m == destroy && shell.Within(prot, p)
}

// globHit is pathHit for a glob pattern, matched component by component
// as the shell does (* does not match a leading dot).
func globHit(pat, prot string, m mode) bool {
	pc, tc := components(pat), components(prot)
	if len(pc) < len(tc) && m != destroy {
		return false
	}
	for i := 0; i < min(len(pc), len(tc)); i++ {
		if !matchComponent(pc[i], tc[i]) {
			return false
		}
	}
	return true
}

func components(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func matchComponent(pat, name string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pat, ".") && !strings.HasPrefix(pat, `\.`) {
		return false
	}
	ok, err := path.Match(pat, name)
	if err != nil {
		return unescape(pat) == name // a malformed pattern is taken literally, as the shell does
	}
	return ok
}

// resolve returns p with symlinks resolved as far as p exists, so a path
// created through a symlinked folder is judged where it lands.
func resolve(p string) string {
	rest := ""
	for cur := p; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.ToSlash(filepath.Join(real, rest))
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// resolvePattern resolves the symlinks of a pattern's literal folders.
func resolvePattern(pat string) string {
	cs := components(pat)
	i := 0
	for i < len(cs) && !hasMeta(cs[i]) {
		i++
	}
	prefix := "/" + strings.Join(cs[:i], "/")
	real := resolve(unescape(prefix))
	if real == unescape(prefix) {
		return pat
	}
	return path.Join(append([]string{escape(real)}, cs[i:]...)...)
}

// escaper escapes the characters special to path.Match and to braces.
var escaper = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`, `{`, `\{`, `}`, `\}`, `,`, `\,`)

func escape(s string) string { return escaper.Replace(s) }

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasMeta reports an unescaped *, ? or [.
func hasMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// isDir reports whether p names a folder.
func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
