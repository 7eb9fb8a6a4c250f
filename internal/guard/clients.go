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

// clientFiles are a client's files in the project: the hook file `gate
// init --client` writes, and the settings that can switch its hooks off.
// Claude Code's are always protected; another client's once its hook file
// is there (the project is registered for it). A client without a hook
// file of its own (VS Code agent mode) has none: it runs the others'.
func clientFiles(c *client.Client) []string {
	if c.HookFile == "" {
		return nil
	}
	return append([]string{c.HookFile}, c.Settings...)
}

// ClientFiles returns every client's files in a project, slash-separated
// from the root: its hook file and the settings that can switch its hooks
// off, Claude Code's first (its shared settings, then its local ones).
func ClientFiles() []string {
	var out []string
	for _, c := range client.All {
		out = append(out, clientFiles(c)...)
	}
	return out
}

// claudeFiles are Claude Code's files, protected in every project.
var claudeFiles = clientFiles(client.Claude)

// SettingsFile is one of a client's settings files: its path, and its
// name as a person finds it (slash-separated from the root, "~/" for the
// user's).
type SettingsFile struct{ Path, Name string }

// ClaudeSettings returns Claude Code's settings files of the project at
// root and the user at home, in the order it reads them, a later file's
// keys winning: the user's (none without home), the project's shared
// ones, then its local ones.
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

// OtherClients returns the files of the other clients the project at
// root is registered for (Claude Code's are Entries' own).
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
	Path    string // the program, absolute and clean; "" when it cannot be known (a bare name, an unknown variable)
}

// Registrations returns the stopgate programs the project's hook files
// register: each command that runs detect, gate or testhook (directly or
// through a launcher), read from every client's hook file that exists,
// with the project variables the clients set resolved. A program is known
// only as an absolute path, or one relative to the root.
//
// read are files the caller has read for this event, by path (nil for
// one it could not read), so that each is read once; the others are read
// here.
func Registrations(root, home string, read map[string][]byte) []Registered {
	root = path.Clean(slash(root))
	var out []Registered
	for _, c := range client.All {
		for _, f := range clientFiles(c) {
			p := filepath.Join(root, filepath.FromSlash(f))
			data, ok := read[p]
			var err error
			if !ok {
				// Through regular: a named pipe planted here holds no hook.
				// No bound: a regular file ends, and the client reads it all.
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

// commandPrograms returns the programs a hook command runs, when it runs a
// stopgate program: each candidate of gate init's launcher (settings.Launcher),
// or the command's first word (the program, or a wrapper)
// and each later word that names a hook program, absolute; "" for one
// that cannot be known. nil when the command runs none of stopgate's.
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

// knownPath is t absolute, when t names a file where the guard can find
// it: an absolute path or one relative to the root; "" for a bare name,
// which the client finds on its PATH, wherever that is.
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
	// Registered are the hook programs the clients' hook files register
	// (Registrations), absolute: protected wherever they are, since
	// replacing one switches the gate off as surely.
	Registered []string
	// Clients are the other clients' hook files and settings (trust.For
	// finds them).
	Clients []Protected
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

// NpmScope is where npm puts stopgate's packages in a project.
const NpmScope = "node_modules/@stopgate"

// Entries returns the protected paths of a project, in order (none with
// protect = []; New makes them the guard's set):
//
//   - the state dir, which holds the pending checks;
//   - the config file in use;
//   - the files each run validator executes inside the project, as
//     shell.Files resolves its run line (the program, the script a shell
//     or an interpreter runs, and the files a shell script sources), or
//     the whole folder of one when that folder is named "validators";
//   - .claude/settings.json and .claude/settings.local.json, which
//     register the hooks, the other clients' hook files and settings
//     (Clients), stopgate's own hook programs when they live in the
//     project, and the programs the hook files register wherever they are;
//   - the project's npm packages of stopgate (NpmScope), found by a glob;
//   - the session's transcript and its subagents' transcripts;
//   - the paths in Protect.
//
// A validator's folder is protected whole only under the conventional
// name: validator scripts often source helpers beside them, which the
// script path alone leaves open, but a program that sits in scripts/,
// test/ or the root shares its folder with files the agent must be free to
// edit. Helpers elsewhere are added with protect.
func Entries(src Source) []Protected {
	if src.Protect != nil && len(src.Protect) == 0 {
		return nil
	}
	root := path.Clean(slash(src.Root))
	ps := []Protected{
		{Path: src.StateDir, Why: "it is stopgate's state dir, which holds the checks pending before you may stop", Dir: true},
		{Path: src.File, Why: "it is stopgate's config, which says what is checked before you may stop"},
	}
	// Thousands of validators usually share a few run lines: resolve each
	// once, and protect each file once (New would drop the repeats anyway,
	// after building them).
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
	// npm's platform package is found by a glob (gate init's launcher, the
	// marketplace plugin's search): a package planted beside it, whose
	// name sorts first, would be the gate that runs.
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
