// Package guard decides, before a tool runs, whether it would write a path stopgate's checks rely on (docs/guard.md).
package guard

import (
	"cmp"
	"errors"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/shell"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/pattern"
	"mvdan.cc/sh/v3/syntax"
)

// Guards reports whether the guard judges calls of tool.
func Guards(tool string) bool {
	return slices.Contains([]string{"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"}, tool)
}

// Protected is one protected path and why it is protected.
type Protected struct {
	Path string // absolute and clean
	Show string // as shown to the agent: relative to the root when inside it
	Why  string // what it is to stopgate, for the reason
	Dir  bool   // a folder even before it exists (the state dir)
	// Planted: guarded against creation; while absent, removing a folder above it is no hit. Not in Paths.
	Planted bool
}

// Set is the protected paths of one project.
type Set struct {
	root, home string
	targets    []target
	cwds       []string // where a relative path may start from an unknown cwd
	envTitle   string
	envFile    EnvFile
}

// EnvFile is, for a file p and the text a write leaves there, the file as shown and the hooks' variables it sets.
type EnvFile func(p string, text func() string) (show string, env []string)

// LoadsEnv makes s deny a Write or Edit that makes a loaded .env set a hook's variable.
func (s *Set) LoadsEnv(title string, f EnvFile) { s.envTitle, s.envFile = title, f }

type target struct {
	Protected
	rel  string // root-relative, for mentions in code; "" outside the root
	real string // Path with symlinks resolved
}

// New returns the set protecting ps in the project at root; home expands ~.
func New(root, home string, ps []Protected) *Set {
	s := &Set{root: slash(root), home: slash(home)}
	for _, p := range ps {
		p.Path = path.Clean(slash(p.Path))
		if slices.ContainsFunc(s.targets, func(t target) bool { return t.Path == p.Path }) {
			continue
		}
		t := target{Protected: p, real: resolve(p.Path)}
		if r, err := filepath.Rel(s.root, p.Path); err == nil && r != ".." && !strings.HasPrefix(r, "../") {
			t.rel = filepath.ToSlash(r)
		}
		t.Show = cmp.Or(p.Show, t.rel, p.Path)
		s.targets = append(s.targets, t)
		for d, prev := path.Dir(p.Path), ""; d != prev; d, prev = path.Dir(d), d { // its folders
			if !slices.Contains(s.cwds, d) {
				s.cwds = append(s.cwds, d)
			}
		}
	}
	return s
}

// Empty reports whether nothing is protected.
func (s *Set) Empty() bool { return s == nil || len(s.targets) == 0 }

// Paths returns the protected paths but the Planted ones.
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

// Reason is the permissionDecisionReason: what is protected, why, what to do.
func (h *Hit) Reason() string {
	show := h.Protected.Show
	what := "it would change " + show
	if h.doubt || h.Why != "" {
		what = h.Why
	} else if h.Target != "" && h.Target != show && h.Target != h.Protected.Path {
		what += " (through " + h.Target + ")"
	}
	if h.doubt && show != "" {
		what += ", and it names " + show
	}
	b := "stopgate denied this " + h.Tool + " call: " + what
	if h.By != "" {
		b += " with `" + cli.Clip(cli.OneLine(h.By), 120, "…") + "`"
	}
	b += ". "
	if h.advice != "" {
		return b + h.advice
	}
	if h.doubt {
		b += "The guard judges what it cannot follow to the end conservatively. "
	}
	if show != "" {
		b += show + " is protected: " + h.Protected.Why + ", and the agent being checked must not change its own checks. "
	}
	if h.doubt {
		b += "If the command does not change it, run its steps as separate plain commands; "
	}
	return b + "Do not try another way to change it. If it really needs to change, ask the user to change it. Reading it is allowed (Read, cat, grep, gate status)."
}

// Check judges one PreToolUse call from cwd (the root when empty); nil lets it through.
func (s *Set) Check(tool string, in hook.ToolInput, cwd string) *Hit {
	if s == nil || !Guards(tool) {
		return nil
	}
	cwd = cmp.Or(cwd, s.root)
	h := s.CheckPath(in.FilePath, cwd)
	switch tool {
	case "Write", "Edit":
		h = cmp.Or(h, s.envWrite(tool, in, cwd))
	case "Bash":
		h = s.CheckBash(in.Command, cwd)
	case "NotebookEdit":
		h = s.CheckPath(in.NotebookPath, cwd)
	}
	if h != nil {
		h.Tool = tool
	}
	return h
}

// envWrite judges a Write or Edit by the text it leaves in a loaded .env.
func (s *Set) envWrite(tool string, in hook.ToolInput, cwd string) *Hit {
	if s.envFile == nil || in.FilePath == "" {
		return nil
	}
	p := shell.Abs(in.FilePath, cwd)
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
	if t := s.hit(escape(shell.Abs(p, slash(cwd))), under); t != nil {
		return &Hit{Protected: t.Protected, Target: p}
	}
	return nil
}

// hit is the target an operation in mode m on the pattern p reaches, symlinks resolved or not.
func (s *Set) hit(p string, m mode) *target {
	forms := slices.Compact([]string{p, resolvePattern(p)})
	for i := range s.targets {
		t := &s.targets[i]
		for _, f := range forms {
			for _, prot := range []string{t.Path, t.real} {
				if !reaches(f, prot, m) {
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

func (s *Set) mentions(code string) *target {
	for i := range s.targets {
		t := &s.targets[i]
		if strings.Contains(code, t.Path) || t.rel != "" && t.rel != "." && strings.Contains(code, t.rel) {
			return t
		}
	}
	return nil
}

func slash(p string) string { return filepath.ToSlash(p) }

// absent reports whether nothing is at p, not even a dangling symlink.
func absent(p string) bool {
	_, err := os.Lstat(filepath.FromSlash(p))
	return errors.Is(err, fs.ErrNotExist)
}

// mode is how an operation reaches a protected path P: a write P and under it; a removal (rm, mv, chmod) its ancestors too.
type mode uint8

const (
	under mode = iota
	destroy
)

// reaches reports whether an operation in mode m on pat reaches prot, by component (* skips a leading dot).
func reaches(pat, prot string, m mode) bool {
	pc, tc := components(pat), components(prot)
	if len(pc) < len(tc) && m != destroy {
		return false
	}
	for i := 0; i < min(len(pc), len(tc)); i++ {
		pat, name := pc[i], tc[i]
		if strings.HasPrefix(name, ".") && !strings.HasPrefix(pat, ".") && !strings.HasPrefix(pat, `\.`) {
			return false
		}
		ok, err := path.Match(pat, name)
		if err != nil {
			ok = shell.Unescape(pat) == name // a malformed pattern is taken literally, as the shell does
		}
		if !ok {
			return false
		}
	}
	return true
}

func components(p string) []string {
	return strings.FieldsFunc(p, func(r rune) bool { return r == '/' })
}

// resolve is p with symlinks resolved as far as it exists: a path is judged where it lands.
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
	real := resolve(shell.Unescape(prefix))
	if real == shell.Unescape(prefix) {
		return pat
	}
	return path.Join(append([]string{escape(real)}, cs[i:]...)...)
}

// escape makes s a pattern matching itself; hasMeta reports an unescaped *, ? or [ ] class.
func escape(s string) string { return pattern.QuoteMeta(s, 0) }
func hasMeta(s string) bool  { return pattern.HasMeta(s, 0) }

func clientFiles(c *client.Client) []string {
	if c.HookFile == "" {
		return nil
	}
	return append([]string{c.HookFile}, c.Settings...)
}

// ClientFiles returns every client's files from the root, Claude Code's first.
func ClientFiles() []string {
	var out []string
	for _, c := range client.All {
		out = append(out, clientFiles(c)...)
	}
	return out
}

// claudeFiles are Claude Code's files, protected in every project.
var claudeFiles = clientFiles(client.Claude)

// SettingsFile is a settings file's path, and its name from the root or ~/.
type SettingsFile struct{ Path, Name string }

// ClaudeSettings returns Claude Code's settings files, the winning one last.
func ClaudeSettings(root, home string) []SettingsFile {
	var out []SettingsFile
	if home != "" {
		out = append(out, SettingsFile{filepath.Join(home, filepath.FromSlash(claudeFiles[0])), "~/" + claudeFiles[0]})
	}
	for _, f := range claudeFiles {
		out = append(out, SettingsFile{filepath.Join(root, filepath.FromSlash(f)), f})
	}
	return out
}

// Registered is a stopgate hook program as a client's hook file registers it.
type Registered struct {
	File    string // the hook file, slash-separated from the root
	Command string // the command as registered
	Path    string // the program, absolute and clean; "" when it cannot be known
}

// Registrations returns the stopgate programs the hook files register; read are files already read.
func Registrations(root, home string, read map[string][]byte) []Registered {
	root = path.Clean(slash(root))
	var out []Registered
	for _, c := range client.All {
		for _, f := range clientFiles(c) {
			p := filepath.Join(root, filepath.FromSlash(f))
			data, ok := read[p]
			if !ok { // through regular: a FIFO planted here holds no hook; one not read holds none
				data, _ = regular.ReadFile(p, math.MaxInt64)
			}
			for _, cmd := range c.Commands(f, data) {
				for _, p := range commandPrograms(cmd, root, home) {
					out = append(out, Registered{File: f, Command: cmd, Path: p})
				}
			}
		}
	}
	return out
}

// commandPrograms returns the programs a hook command runs if one is stopgate's: a launcher's candidates, or the first word and each hook program.
func commandPrograms(cmd, root, home string) []string {
	if words, ok := settings.Candidates(cmd); ok { // gate init's launcher
		var progs []string
		for _, w := range words {
			progs = append(progs, commandPrograms(w, root, home)...)
		}
		return progs
	}
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil || len(f.Stmts) == 0 {
		return nil
	}
	call, ok := f.Stmts[0].Cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return nil
	}
	vars := []string{"HOME=" + home}
	for _, c := range client.All {
		if c.ProjectVar != "" {
			vars = append(vars, c.ProjectVar+"="+root)
		}
	}
	cfg := &expand.Config{Env: expand.ListEnviron(vars...), NoUnset: true}
	var progs []string
	runs := false
	for i, w := range call.Args {
		raw := strings.Trim(cmd[w.Pos().Offset():w.End().Offset()], `"'`)
		t, err := expand.Literal(cfg, w)
		if err != nil || home == "" && strings.Contains(raw, "HOME") {
			t = "" // a variable the clients do not set: unknown
		}
		prog := slices.Contains(hook.Programs, path.Base(raw)) || t != "" && slices.Contains(hook.Programs, path.Base(t))
		runs = runs || prog
		if i == 0 || prog {
			known := "" // a bare name: PATH finds it
			if strings.Contains(t, "/") {
				known = shell.Abs(t, root)
			}
			progs = append(progs, known)
		}
	}
	if !runs {
		return nil
	}
	return progs
}

// Source is what the guard needs of a project and its config.
type Source struct {
	Root       string
	Home       string   // $HOME, for ~ in commands
	File       string   // the config file in use
	StateDir   string   // absolute
	Protect    []string // [settings] protect: nil the defaults only, empty the guard off
	Runs       []Run    // the run validators
	Commands   []string // stopgate's hook programs, protected inside Root
	Registered []string // the hook programs the hook files register, anywhere
	Transcript string   // the session's transcript, and its subagents' beside it
}

// Run is a validator that runs a program.
type Run struct{ Name, Command string }

// NpmScope is where npm puts stopgate's packages in a project.
const NpmScope = "node_modules/@stopgate"

// Entries returns a project's protected paths, as docs/guard.md lists them.
func Entries(src Source) []Protected {
	if src.Protect != nil && len(src.Protect) == 0 {
		return nil
	}
	root := path.Clean(slash(src.Root))
	ps := []Protected{
		{Path: src.StateDir, Why: "it is stopgate's state dir, which holds the checks pending before you may stop", Dir: true},
		{Path: src.File, Why: "it is stopgate's config, which says what is checked before you may stop"},
	}
	// Thousands of validators share a few run lines: resolve each once.
	files := map[string][]shell.File{}
	for _, r := range src.Runs {
		key := shell.Key(r.Command)
		if _, ok := files[key]; !ok {
			files[key] = shell.Files(r.Command, root)
		}
		name := `"` + r.Name + `"`
		for _, f := range files[key] {
			p, why := f.Path, "it is the program of the validator "+name
			if dir := path.Dir(f.Path); dir != root && path.Base(dir) == "validators" { // protected whole
				p, why = dir, "it holds the program of the validator "+name
			} else if f.SourcedBy != "" {
				why = "the program of the validator " + name + " sources it"
			}
			if !slices.ContainsFunc(ps, func(q Protected) bool { return q.Path == p }) {
				ps = append(ps, Protected{Path: p, Why: why})
			}
		}
	}
	for _, c := range client.All { // Claude Code's always, another client's once its hook file is there
		if c.HookFile == "" || c != client.Claude && absent(root+"/"+c.HookFile) {
			continue
		}
		ps = append(ps, Protected{Path: root + "/" + c.HookFile, Why: "it registers stopgate's hooks with " + c.Title})
		for _, s := range c.Settings {
			ps = append(ps, Protected{Path: root + "/" + s, Why: "its settings can switch " + c.Title + "'s hooks off"})
		}
	}
	// The hooks find npm's package by a glob: one planted beside it would run.
	ps = append(ps, Protected{Path: root + "/" + NpmScope, Why: "it holds stopgate's npm packages, whose programs the hooks run", Dir: true, Planted: true})
	for _, c := range src.Commands {
		if c = shell.Abs(c, root); c != root && shell.Within(c, root) {
			ps = append(ps, Protected{Path: c, Why: "it is one of stopgate's hook programs"})
		}
	}
	for _, c := range src.Registered {
		if c = path.Clean(slash(c)); strings.HasPrefix(c, "/") && c != root {
			ps = append(ps, Protected{Path: c, Why: "it is one of stopgate's hook programs, as a client's hook file registers it"})
		}
	}
	if t := slash(src.Transcript); strings.HasPrefix(t, "/") && strings.HasSuffix(t, ".jsonl") && !shell.Within(root, path.Dir(t)) {
		why := "it is this session's transcript, which stopgate checks the queue against"
		ps = append(ps, Protected{Path: t, Why: why}, Protected{Path: strings.TrimSuffix(t, ".jsonl"), Why: why})
	}
	for _, p := range src.Protect {
		if strings.TrimSpace(p) == "" {
			continue
		}
		ps = append(ps, Protected{Path: shell.Abs(p, root), Why: "it is listed in [settings] protect of the stopgate config"})
	}
	return ps
}
