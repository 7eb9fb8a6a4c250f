package guard

import (
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"

	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/settings"
)

// clientFiles are a client's files in the project: the hook file `gate
// init --client` writes, and the settings that can switch its hooks off.
// Claude Code's are always protected; another client's once its hook file
// is there (the project is registered for it).
func clientFiles(c *client.Client) []string { return append([]string{c.HookFile}, c.Settings...) }

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
		if c == client.Claude {
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
