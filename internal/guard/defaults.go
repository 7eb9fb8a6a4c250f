package guard

import (
	"path"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// Source is what the guard needs of a project and its config.
type Source struct {
	Root     string
	Home     string // $HOME, for ~ in commands
	File     string // the config file in use
	StateDir string // absolute
	// Protect is [settings] protect: nil protects the defaults only, an
	// empty list turns the guard off, paths (relative to Root unless
	// absolute; a folder covers what is in it) are protected as well.
	Protect []string
	Runs    []Run
	// Commands are stopgate's own hook programs (bin/detect, bin/gate):
	// replacing one with `exit 0` would switch the gate off. Only those
	// inside Root are protected.
	Commands []string
	// Transcript is the session's transcript (transcript_path), which the
	// gate checks the queue against: it and the session's folder of
	// subagent transcripts beside it are protected.
	Transcript string
}

// Run is a validator that runs a program.
type Run struct{ Name, Command string }

// ValidatorsDir is the folder name stopgate's convention gives to
// validator programs (the example project's, and gate init's): a folder
// of that name that holds a run validator is protected whole.
const ValidatorsDir = "validators"

// Settings files through which Claude Code learns about stopgate's hooks.
var hookSettings = []string{".claude/settings.json", ".claude/settings.local.json"}

// Defaults returns the protected set of a project:
//
//   - the state dir, which holds the pending checks;
//   - the config file in use;
//   - the program of each run validator: the command's first word when it
//     is a path inside the project (for `sh x.sh`, `python3 x.py` and the
//     like, the script), or its whole folder when that folder is named
//     "validators";
//   - .claude/settings.json and .claude/settings.local.json, which
//     register the hooks, and stopgate's own hook programs when they live
//     in the project;
//   - the session's transcript and its subagents' transcripts;
//   - the paths in Protect.
//
// A validator's folder is protected whole only under the conventional
// name: validator scripts often source helpers beside them, which the
// script path alone leaves open, but a program that sits in scripts/,
// test/ or the root shares its folder with files the agent must be free to
// edit. Helpers elsewhere are added with protect.
func Defaults(src Source) *Set {
	if src.Protect != nil && len(src.Protect) == 0 {
		return New(src.Root, src.Home, nil)
	}
	root := path.Clean(slash(src.Root))
	ps := []Protected{
		{Path: src.StateDir, Why: "it is stopgate's state dir, which holds the checks pending before you may stop", Dir: true},
		{Path: src.File, Why: "it is stopgate's config, which says what is checked before you may stop"},
	}
	// Thousands of validators usually share a few programs: judge each plain
	// first word once, and protect each program once (New would drop the
	// repeats anyway, after building them).
	plain := map[string]string{}
	protected := map[string]bool{}
	for _, r := range src.Runs {
		first := firstWord(r.Command)
		prog, ok := plain[first]
		if !ok {
			var isPlain bool
			if prog, isPlain = plainProgram(r.Command, root); isPlain {
				plain[first] = prog
			} else {
				prog = analyzedProgram(r.Command, root)
			}
		}
		if prog == "" || protected[prog] {
			continue
		}
		protected[prog] = true
		if dir := path.Dir(prog); dir != root && path.Base(dir) == ValidatorsDir {
			ps = append(ps, Protected{Path: dir, Why: "it holds the program of the validator " + quote(r.Name)})
			continue
		}
		ps = append(ps, Protected{Path: prog, Why: "it is the program of the validator " + quote(r.Name)})
	}
	for _, f := range hookSettings {
		ps = append(ps, Protected{Path: root + "/" + f, Why: "it registers stopgate's hooks with Claude Code"})
	}
	for _, c := range src.Commands {
		if c = absolute(slash(c), root); c != root && within(c, root) {
			ps = append(ps, Protected{Path: c, Why: "it is one of stopgate's hook programs"})
		}
	}
	if t := slash(src.Transcript); strings.HasPrefix(t, "/") && strings.HasSuffix(t, ".jsonl") && !within(root, path.Dir(t)) {
		why := "it is this session's transcript, which stopgate checks the queue against"
		ps = append(ps, Protected{Path: t, Why: why}, Protected{Path: strings.TrimSuffix(t, ".jsonl"), Why: why})
	}
	for _, p := range src.Protect {
		if strings.TrimSpace(p) == "" {
			continue
		}
		ps = append(ps, Protected{Path: absolute(slash(p), root), Why: "it is listed in [settings] protect of the stopgate config"})
	}
	return New(root, src.Home, ps)
}

// program returns the project file a run command executes: its first word
// when that is a path (after env, timeout and the like), or the script an
// interpreter runs; "" when it runs something outside the project or names
// no file (go test ./..., make lint, python3 -c …).
func program(run, root string) string {
	if p, ok := plainProgram(run, root); ok {
		return p
	}
	return analyzedProgram(run, root)
}

// plainProgram answers the usual run line, a path and plain arguments
// ("validators/check.sh 42"), without the shell analysis: Defaults asks
// for every run validator on every call the guard judges, and a config of
// thousands of validators would spend most of the hook there. ok is false
// for anything the analysis must see: quotes, expansions, assignments,
// wrappers, shells and interpreters.
func plainProgram(run, root string) (p string, ok bool) {
	first := firstWord(run)
	if first == "" || !strings.Contains(first, "/") {
		return "", false
	}
	for _, c := range first {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/._-+,@", c)) {
			return "", false
		}
	}
	name := path.Base(first)
	if _, wrapper := wrappers[name]; wrapper || isShell(name) || interpreterNames[name] || strings.HasPrefix(name, "python") {
		return "", false
	}
	p = absolute(first, root)
	if !within(p, root) || p == root {
		return "", true
	}
	return p, true
}

// firstWord is run's text up to its first space: all plainProgram reads.
func firstWord(run string) string {
	first, _, _ := strings.Cut(strings.TrimLeft(run, " \t"), " ")
	return first
}

func analyzedProgram(run, root string) string {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(run), "")
	if err != nil || len(f.Stmts) == 0 {
		return ""
	}
	cmd := f.Stmts[0].Cmd
	for {
		b, ok := cmd.(*syntax.BinaryCmd)
		if !ok {
			break
		}
		cmd = b.X.Cmd
	}
	call, ok := cmd.(*syntax.CallExpr)
	if !ok || len(call.Args) == 0 {
		return ""
	}
	cfg := &expand.Config{Env: environ{set: &Set{root: root}}}
	args, err := expand.Fields(cfg, call.Args...)
	if err != nil {
		return ""
	}
	ws := make([]word, len(args))
	for i, t := range args {
		ws[i] = newWord(t)
	}
	for len(ws) > 0 && !ws[0].unknown {
		skip, ok := wrappers[path.Base(ws[0].text)]
		if !ok {
			break
		}
		n := skip(ws[1:])
		if n < 0 || n >= len(ws)-1 {
			return ""
		}
		ws = ws[1+n:]
	}
	if len(ws) == 0 || ws[0].unknown {
		return ""
	}
	first := ws[0]
	if name := path.Base(first.text); isShell(name) || interpreterNames[name] || strings.HasPrefix(name, "python") {
		inline := map[string]bool{"-c": true, "-e": !isShell(name), "-m": !isShell(name)}
		first = word{unknown: true}
		for _, w := range ws[1:] {
			if inline[w.text] {
				return "" // inline code or a module: no file of the project
			}
			if !strings.HasPrefix(w.text, "-") {
				first = w
				break
			}
		}
	}
	if first.unknown || !strings.Contains(first.text, "/") {
		return "" // a bare name is looked up in PATH, not in the project
	}
	p := absolute(first.text, root)
	if !within(p, root) || p == root {
		return ""
	}
	return p
}

func isShell(name string) bool {
	switch name {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish":
		return true
	}
	return false
}

func quote(s string) string { return `"` + s + `"` }
