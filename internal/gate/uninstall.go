package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
)

// runUninstall is `gate uninstall [--bin DIR] [--client NAME]`: it takes out of
// .claude/settings.json what gate init put there (its hooks, the OS wall's
// sandbox keys and deny rules) and the state dir's line out of
// .gitignore, each only where it is still exactly as init wrote it, and
// keeps every other byte. What was changed by hand since is left, and
// named. A settings file that is not JSON changes nothing. mappings.toml
// is the project's own and stays.
func runUninstall(env *cli.Env, args []string) error {
	fl := flags("uninstall")
	bin := fl.String("bin", "bin", "the `DIR` given to gate init --bin")
	clientName := fl.String("client", "", "undo gate init --client `CLIENT` (codex, gemini, copilot, opencode)")
	if err := parseFlags(env, fl, args); err != nil {
		return err
	}
	c, err := clientNamed(*clientName)
	if err != nil {
		return usageError("uninstall", err)
	}
	if c != nil {
		return uninstallClient(env, c, *bin) // uninstall_client.go
	}
	root := project.Root(env.Getenv, "", env.Dir)
	path := filepath.Join(root, filepath.FromSlash(settingsFile))
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var out []byte
	var r settings.Removal
	if err == nil {
		prefix, binDir := binPrefix(root, *bin)
		want := wanted(prefix, binInstall(root, *bin), root, true)
		for _, h := range want[:len(want):len(want)] { // and the bare paths older gate inits wrote
			h.Command = prefix + "/" + settings.Program(h.Command)
			want = append(want, h)
		}
		file := filepath.Join(root, project.ConfigName)
		cfg, _, _ := config.Inspect(file, root, config.FileOnly)
		rules, _ := wallRules(root, env.Getenv("HOME"), file, cfg, []string{binDir})
		if out, r, err = settings.Remove(data, want, hook.Programs, rules); err != nil {
			return uninstallError(settingsFile, err)
		}
	}
	if len(r.Removed) > 0 {
		if err := settings.WriteFile(path, out); err != nil {
			return fmt.Errorf("writing %s: %w", settingsFile, err)
		}
	}
	sayRemoval(env, settingsFile, r, data != nil)
	return removeIgnore(env, root)
}

// uninstallError names the file, line and column of a file gate uninstall
// cannot read, and says nothing was changed.
func uninstallError(name string, err error) error {
	return cli.WithHint(named(name, err), "nothing was changed: fix the file by hand, then run gate uninstall again")
}

// sayRemoval tells what was taken out of the file name, and what of
// stopgate's was left there because it was changed since; had: the file
// is there.
func sayRemoval(env *cli.Env, name string, r settings.Removal, had bool) {
	switch {
	case len(r.Removed) > 0:
		fmt.Fprintf(env.Stdout, "%s: removed %s\n", name, plural(len(r.Removed), "entry of stopgate's", "entries of stopgate's"))
		for _, s := range r.Removed {
			fmt.Fprintf(env.Stdout, "  - %s\n", s)
		}
	case had:
		fmt.Fprintf(env.Stdout, "%s: nothing of stopgate's as gate init wrote it\n", name)
	}
	for _, l := range r.Left {
		fmt.Fprintf(env.Stdout, "%s: left %s: it was changed since; remove it by hand if it should go\n", name, l)
	}
}
