package gate

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
)

// The second wall. The tamper guard judges a tool call by its text, which
// cannot be complete; the client's own OS sandbox refuses the agent's Bash
// any write to the protected set whatever the text, and its Edit deny
// rules refuse the Write and Edit tools. The rules, the guard and the
// confinement of validators (package stop) all take the protected set from
// guard.ProjectSet, so they cannot disagree.

// wallRules returns the client's Edit deny rules for the project's
// protected set (guard.ProjectSet), and whether that set is empty. cfg may
// be nil, for a project without a readable config.
func wallRules(root, home, file string, cfg *config.Config, bins []string) (rules []string, empty bool) {
	set, _ := guard.ProjectSet(root, home, file, "", bins, cfg)
	return denyRules(set, root, home), set.Empty()
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
		st, err := os.Stat(filepath.FromSlash(p.Path))
		dir := (err == nil && st.IsDir()) || p.Dir
		out = append(out, settings.DenyRule(filepath.ToSlash(root), filepath.ToSlash(home), p.Path, dir))
	}
	return out
}

// writeWall merges the sandbox settings and the deny rules into the
// project's .claude/settings.json, as register merges hooks, and says what
// it added, what the user's settings keep against the wall, and what the
// machine lacks for it.
func writeWall(env *cli.Env, root string, bins []string) error {
	path, name := filepath.Join(root, filepath.FromSlash(settingsFile)), settingsFile
	file := filepath.Join(root, project.ConfigName)
	cfg, _, _ := config.Inspect(file, root, config.FileOnly)
	rules, off := wallRules(root, env.Getenv("HOME"), file, cfg, bins)
	if off {
		fmt.Fprintf(env.Stdout, "%s: no OS wall: [settings] protect = [] protects nothing\n", name)
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, added, st, err := settings.MergeWall(data, rules)
	if err != nil {
		return settingsError(name, err)
	}
	if len(added) == 0 {
		fmt.Fprintf(env.Stdout, "%s: the OS wall is already there (sandbox, %s)\n", name, plural(len(rules), "deny rule", "deny rules"))
	} else {
		if err := settings.WriteFile(path, out); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		fmt.Fprintf(env.Stdout, "%s: the OS wall: added %s\n", name, plural(len(added), "setting", "settings"))
		for _, a := range added {
			fmt.Fprintf(env.Stdout, "  + %s\n", a)
		}
	}
	noteAgainst(env, root, st)
	if missing := missingTools(env); len(missing) > 0 {
		fmt.Fprintf(env.Stdout, "note: the OS sandbox needs %s, not installed here: until it is, the client refuses every Bash command (apt-get install %s)\n",
			strings.Join(missing, " and "), strings.Join(packages(missing), " "))
	}
	return nil
}

// noteAgainst tells which sandbox keys the user set against the wall, in
// the file init wrote (st) or in the local settings, which init leaves
// alone and which win over it. The user's settings lose to the project's,
// where init has set every key.
func noteAgainst(env *cli.Env, root string, st settings.WallStatus) {
	for _, a := range st.Against() {
		fmt.Fprintf(env.Stdout, "note: %s: %s; left as it is\n", settingsFile, a)
	}
	local := settingsFiles(env, root)[1]
	data, err := os.ReadFile(local.path)
	if err != nil {
		return
	}
	if other, err := settings.InspectWall(data); err == nil {
		for _, a := range other.Against() {
			fmt.Fprintf(env.Stdout, "note: %s: %s; it overrides %s\n", local.name, a, settingsFile)
		}
	}
}

// wallReadable refuses a project's settings whose sandbox or permissions
// the wall could not be merged into, as writeWall would.
func wallReadable(root string) error {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(settingsFile)))
	if err != nil {
		return nil // missing: a new file; unreadable: register says so
	}
	if _, err := settings.InspectWall(data); err != nil {
		return settingsError(settingsFile, err)
	}
	return nil
}

// missingTools returns the programs the client's sandbox needs that are not
// on PATH: bwrap and socat on Linux; macOS's Seatbelt is built in.
func missingTools(env *cli.Env) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	var out []string
	for _, t := range []string{"bwrap", "socat"} {
		if !onPath(env.Getenv("PATH"), t) {
			out = append(out, t)
		}
	}
	return out
}

func onPath(path, name string) bool {
	for _, dir := range filepath.SplitList(path) {
		if executable(filepath.Join(dir, name)) {
			return true
		}
	}
	return false
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
