package gate

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/trust"
)

// The second wall. The tamper guard judges a tool call by its text, which
// cannot be complete; the client's own OS sandbox refuses the agent's Bash
// any write to the protected set whatever the text, and its Edit deny
// rules refuse the Write and Edit tools. The rules, the guard and the
// confinement of validators (package stop) all derive from the trusted
// base (trust.For), so they cannot disagree. The wall is its shared part:
// the project's settings are the team's.

// wallRules returns the client's Edit deny rules for the project's trusted
// base (trust.Base.Wall), and whether it is empty. cfg may be nil, for a
// project without a readable config; regs are the hook files'
// registrations as read for this event.
func wallRules(root, home, file string, cfg *config.Config, regs []guard.Registered) (rules []string, empty bool) {
	base, _ := trust.For(trust.Project{Root: root, Home: home, File: file, Config: cfg, Regs: regs})
	set := base.Wall()
	return denyRules(set, root, home), set.Empty()
}

// projectSet returns the wall of the project at root, its config read
// from file (trust.Base.Wall); bins and registered are hook programs
// about to be registered, beside those the files register.
func projectSet(env *cli.Env, root, file string, bins []string, registered ...string) *guard.Set {
	cfg, _, _ := config.Inspect(file, root, config.FileOnly)
	base, _ := trust.For(trust.Project{Root: root, Home: env.Getenv("HOME"), File: file, Config: cfg, Bins: bins, Registered: registered})
	return base.Wall()
}

// denyRules returns the client's Edit deny rules for set: a folder's rule
// covers what is in it, and the state dir is a folder even before it
// exists (guard.Protected.Dir).
func denyRules(set *guard.Set, root, home string) []string {
	if home != "" {
		home = filepath.Clean(home) // $HOME as set, maybe with a trailing slash
	}
	var out []string
	for _, p := range set.Paths() {
		for _, path := range walled(p.Path) {
			st, err := os.Stat(filepath.FromSlash(path))
			dir := (err == nil && st.IsDir()) || p.Dir
			out = append(out, settings.DenyRule(filepath.ToSlash(root), filepath.ToSlash(home), path, dir))
		}
	}
	return out
}

// walled is the paths the wall names for a protected path: a glob (npm's
// registered node_modules/@stopgate/*/bin/gate) is the paths it matches
// here, as gate init names them, since Claude Code's sandbox does not
// apply a glob's deny rule to the agent's Bash (measured on 2.1.332: the
// write went through; the concrete path was read-only). The guard keeps
// the glob itself.
func walled(path string) []string {
	if !strings.ContainsAny(path, "*?[") {
		return []string{path}
	}
	matches, _ := filepath.Glob(filepath.FromSlash(path)) // a bad pattern matches nothing
	for i, m := range matches {
		matches[i] = filepath.ToSlash(m)
	}
	return matches
}

// writeWall merges the OS wall into the project's settings, alone: a
// plugin's, whose hooks go elsewhere (initPlugin).
func writeWall(env *cli.Env, root string, bins []string) error {
	files := settingsFiles(env, root)
	data, err := os.ReadFile(files.shared.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, wall, err := mergeWall(env, root, data, bins, nil)
	if err != nil {
		return err
	}
	if len(wall.added) > 0 {
		if err := settings.WriteFile(files.shared.Path, out); err != nil {
			return fmt.Errorf("writing %s: %w", files.shared.Name, err)
		}
	}
	wall.say(env, files)
	return nil
}

// wallMerge is the OS wall merged into the project's settings.
type wallMerge struct {
	off   bool     // [settings] protect = []: nothing to wall in
	rules []string // the deny rules the wall holds
	added []string // the settings it added
	st    settings.WallStatus
}

// mergeWall merges the sandbox settings and the deny rules into data, the
// project's settings as they will be written; registered are the hook
// programs they will register, protected wherever they are. A file the
// wall cannot be merged into is refused with its line and column.
func mergeWall(env *cli.Env, root string, data []byte, bins, registered []string) ([]byte, wallMerge, error) {
	set := projectSet(env, root, filepath.Join(root, project.ConfigName), bins, registered...)
	if set.Empty() {
		return data, wallMerge{off: true}, nil
	}
	rules := denyRules(set, root, env.Getenv("HOME"))
	out, added, st, err := settings.MergeWall(data, rules)
	if err != nil {
		return nil, wallMerge{}, settingsError(settingsFile, err)
	}
	return out, wallMerge{rules: rules, added: added, st: st}, nil
}

// say tells what the wall added, what the user's settings keep against it,
// and what the machine lacks for it.
func (w wallMerge) say(env *cli.Env, files claudeFiles) {
	name := files.shared.Name
	if w.off {
		fmt.Fprintf(env.Stdout, "%s: no OS wall: [settings] protect = [] protects nothing\n", name)
		return
	}
	if len(w.added) == 0 {
		fmt.Fprintf(env.Stdout, "%s: the OS wall is already there (sandbox, %s)\n", name, cli.Plural(len(w.rules), "deny rule", "deny rules"))
	} else {
		fmt.Fprintf(env.Stdout, "%s: the OS wall: added %s\n", name, cli.Plural(len(w.added), "setting", "settings"))
		for _, a := range w.added {
			fmt.Fprintf(env.Stdout, "  + %s\n", a)
		}
	}
	noteAgainst(env, files, w.st)
	if missing := missingTools(env); len(missing) > 0 {
		fmt.Fprintf(env.Stdout, "note: the OS sandbox needs %s, not installed here: until it is, the client refuses every Bash command (apt-get install %s)\n",
			strings.Join(missing, " and "), strings.Join(packages(missing), " "))
	}
}

// noteAgainst tells which sandbox keys the user set against the wall, in
// the file init wrote (st) or in the settings read after it (the local
// ones), which init leaves alone and which win over it. The user's
// settings lose to the project's, where init has set every key.
func noteAgainst(env *cli.Env, files claudeFiles, st settings.WallStatus) {
	for _, a := range st.Against() {
		fmt.Fprintf(env.Stdout, "note: %s: %s; left as it is\n", files.shared.Name, a)
	}
	for _, f := range files.over() {
		data, err := os.ReadFile(f.Path)
		if err != nil {
			continue
		}
		if other, err := settings.InspectWall(data); err == nil {
			for _, a := range other.Against() {
				fmt.Fprintf(env.Stdout, "note: %s: %s; it overrides %s\n", f.Name, a, files.shared.Name)
			}
		}
	}
}

// missingTools returns the programs the client's sandbox needs that are not
// on PATH: bwrap and socat on Linux; macOS's Seatbelt is built in.
func missingTools(env *cli.Env) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	var out []string
	for _, t := range []string{"bwrap", "socat"} {
		onPath := slices.ContainsFunc(filepath.SplitList(env.Getenv("PATH")), func(dir string) bool {
			return executable(filepath.Join(dir, t))
		})
		if !onPath {
			out = append(out, t)
		}
	}
	return out
}

// executable reports whether path is a file the client can run.
func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// packages names the Debian packages of tools.
func packages(tools []string) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = cmp.Or(map[string]string{"bwrap": "bubblewrap"}[t], t) // else the tool's own name
	}
	return out
}
