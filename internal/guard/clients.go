package guard

import (
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/shell"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// clientFiles are a client's hook file and the settings that can switch
// its hooks off; none without a hook file of its own (VS Code).
func clientFiles(c *client.Client) []string {
	if c.HookFile == "" {
		return nil
	}
	return append([]string{c.HookFile}, c.Settings...)
}

// ClientFiles returns every client's files, slash-separated from the
// root, Claude Code's first.
func ClientFiles() []string {
	var out []string
	for _, c := range client.All {
		out = append(out, clientFiles(c)...)
	}
	return out
}

// claudeFiles are Claude Code's files, protected in every project.
var claudeFiles = clientFiles(client.Claude)

// SettingsFile is a settings file's path, and its name as a person finds
// it (from the root, "~/" for the user's).
type SettingsFile struct{ Path, Name string }

// ClaudeSettings returns Claude Code's settings files in the order it
// reads them, a later one winning: the user's (none without home), the
// project's shared, then local ones.
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

// OtherClients returns the files of the other clients the project is
// registered for.
func OtherClients(root string) []Protected {
	var out []Protected
	for _, c := range client.All {
		if c == client.Claude || c.HookFile == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(root, filepath.FromSlash(c.HookFile))); err != nil {
			continue
		}
		out = append(out, Protected{Path: root + "/" + c.HookFile, Why: "it registers stopgate's hooks with " + c.Title})
		for _, s := range c.Settings {
			out = append(out, Protected{Path: root + "/" + s, Why: "its settings can switch " + c.Title + "'s hooks off"})
		}
	}
	return out
}

// Registered is a stopgate hook program as a client's hook file registers it.
type Registered struct {
	File    string // the hook file, slash-separated from the root
	Command string // the command as registered
	Path    string // the program, absolute and clean; "" when it cannot be known
}

// Registrations returns the stopgate programs (detect, gate, testhook)
// the project's hook files register, with the clients' project variables
// resolved. read are files the caller has read already, by path (nil for
// one it could not read).
func Registrations(root, home string, read map[string][]byte) []Registered {
	root = path.Clean(slash(root))
	var out []Registered
	for _, c := range client.All {
		for _, f := range clientFiles(c) {
			p := filepath.Join(root, filepath.FromSlash(f))
			data, ok := read[p]
			var err error
			if !ok {
				// A FIFO planted here holds no hook; a regular file ends.
				data, err = regular.ReadFile(p, math.MaxInt64)
			}
			if err != nil {
				continue
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

// commandPrograms returns the programs a hook command runs when it runs
// one of stopgate's (nil otherwise): each candidate of gate init's
// launcher, or the first word and each word naming a hook program; "" for
// one that cannot be known.
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
	env := expand.ListEnviron(vars...)
	cfg := &expand.Config{Env: env, NoUnset: true}
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
			progs = append(progs, knownPath(t, root))
		}
	}
	if !runs {
		return nil
	}
	return progs
}

// knownPath is t absolute, or relative to the root; "" for a bare name,
// found on a PATH the guard cannot know.
func knownPath(t, root string) string {
	switch {
	case strings.HasPrefix(t, "/"):
		return path.Clean(t)
	case strings.Contains(t, "/"):
		return path.Join(root, t)
	}
	return ""
}

// Source is what the guard needs of a project and its config.
type Source struct {
	Root       string
	Home       string      // $HOME, for ~ in commands
	File       string      // the config file in use
	StateDir   string      // absolute
	Protect    []string    // [settings] protect: nil the defaults only, empty the guard off
	Runs       []Run       // the run validators
	Commands   []string    // stopgate's hook programs, protected inside Root
	Registered []string    // the hook programs the hook files register, anywhere
	Clients    []Protected // the other clients' hook files and settings
	Transcript string      // the session's transcript, and its subagents' beside it
}

// Run is a validator that runs a program.
type Run struct{ Name, Command string }

// ValidatorsDir is the conventional folder of validator programs: one
// that holds a run validator is protected whole.
const ValidatorsDir = "validators"

// NpmScope is where npm puts stopgate's packages in a project.
const NpmScope = "node_modules/@stopgate"

// Entries returns the protected paths of a project, in order: the table
// in docs/guard.md (none with protect = []).
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
	protected := map[string]bool{}
	for _, r := range src.Runs {
		key := shell.Key(r.Command)
		fs, ok := files[key]
		if !ok {
			fs = shell.Files(r.Command, root)
			files[key] = fs
		}
		for _, f := range fs {
			if protected[f.Path] {
				continue
			}
			protected[f.Path] = true
			if dir := path.Dir(f.Path); dir != root && path.Base(dir) == ValidatorsDir {
				ps = append(ps, Protected{Path: dir, Why: "it holds the program of the validator " + quote(r.Name)})
				continue
			}
			why := "it is the program of the validator " + quote(r.Name)
			if f.SourcedBy != "" {
				why = "the program of the validator " + quote(r.Name) + " sources it"
			}
			ps = append(ps, Protected{Path: f.Path, Why: why})
		}
	}
	for _, f := range claudeFiles {
		ps = append(ps, Protected{Path: root + "/" + f, Why: "it registers stopgate's hooks with Claude Code"})
	}
	ps = append(ps, src.Clients...)
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

func quote(s string) string { return `"` + s + `"` }
