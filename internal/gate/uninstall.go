package gate

import (
	"bytes"
	"fmt"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/guard"
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
	clientName := clientFlag(fl, "undo gate init --client `CLIENT`")
	plugin := fl.String("plugin", "", "undo gate init --plugin `DIR`: its files there, and the OS wall it added here")
	if err := parseFlags(env, fl, args); err != nil {
		return err
	}
	c, err := clientNamed(*clientName)
	if err == nil {
		err = ownFile(c)
	}
	if err != nil {
		return usageError("uninstall", err)
	}
	root := project.Root(env.Getenv, "", env.Dir)
	var plan []undo
	if c != nil {
		plan, err = clientUndo(env, c, root, *bin) // uninstall_client.go
	} else {
		plan, err = claudeUndo(env, root, *bin, *plugin)
	}
	if err != nil {
		return err
	}
	if *plugin != "" {
		more, err := pluginUndo(absFrom(env.Dir, *plugin))
		if err != nil {
			return err
		}
		plan = append(plan, more...)
	}
	// Every file is read and checked before any is written: one that does
	// not parse changes nothing.
	for _, u := range plan {
		if err := u.apply(); err != nil {
			return err
		}
		sayRemoval(env, u.name, u.r, u.had)
	}
	// The state dir serves every client's set-up: its line goes with the
	// last of them.
	if regs := guard.Registrations(root, env.Getenv("HOME"), nil); len(regs) > 0 {
		if line := ignoreLine(root); line != "" {
			fmt.Fprintf(env.Stdout, "%s: kept %s: %s still registers stopgate\n", gitignoreFile, line, regs[0].File)
		}
		return nil
	}
	return removeIgnore(env, root)
}

// claudeUndo plans taking out of .claude/settings.json the hooks gate init
// registers on each route (routes), and the bare paths older gate inits
// wrote, and the OS wall's sandbox keys and deny rules, a plugin's in
// plugin (its folder, or "") included.
func claudeUndo(env *cli.Env, root, bin, plugin string) ([]undo, error) {
	var want []settings.Hook
	bins := npmDirs(root)
	if plugin != "" {
		bins = append(bins, filepath.Join(absFrom(env.Dir, plugin), "bin"))
	}
	for _, in := range routes(root, bin) {
		hooks := wanted(in.dir, in, root, true)
		for _, h := range hooks[:len(hooks):len(hooks)] {
			h.Command = in.dir + "/" + settings.Program(h.Command)
			hooks = append(hooks, h)
		}
		want = append(want, hooks...)
		if in.path != "" {
			bins = append(bins, in.path)
		}
	}
	set := projectSet(env, root, filepath.Join(root, project.ConfigName), bins)
	u, err := undoHooks(client.Claude, root, settingsFile, want, denyRules(set, root, env.Getenv("HOME")))
	return []undo{u}, err
}

// pluginUndo plans taking out of the plugin in dir what gate init --plugin
// wrote: its hooks, hooks.json when nothing else is left in it, and the
// manifest while it is byte for byte init's. The plugin's programs in bin
// are the user's to remove.
func pluginUndo(dir string) ([]undo, error) {
	base, name := filepath.Dir(dir), filepath.Base(dir)
	hooks, err := undoHooks(client.Claude, base, filepath.ToSlash(filepath.Join(name, pluginHooks)), pluginWanted(dir), nil)
	if err != nil {
		return nil, err
	}
	hooks.gone = bytes.Equal(hooks.out, pluginHooksNew)
	manifest, err := undoFile(base, filepath.ToSlash(filepath.Join(name, pluginManifestFile)), func(u *undo, data []byte) error {
		if bytes.Equal(data, pluginManifest()) {
			u.gone = true
			u.r.Removed = []string{"the plugin manifest"}
		} else {
			u.r.Left = []string{"the plugin manifest: it differs from the one gate init writes"}
		}
		return nil
	})
	return []undo{hooks, manifest}, err
}

// uninstallError names the file, line and column of a file gate uninstall
// cannot read, and says nothing was changed.
func uninstallError(name string, err error) error {
	return cli.WithHint(settings.Named(name, err), "nothing was changed: fix the file by hand, then run gate uninstall again")
}

// sayRemoval tells what was taken out of the file name, and what of
// stopgate's was left there because it was changed since; had: the file
// is there.
func sayRemoval(env *cli.Env, name string, r settings.Removal, had bool) {
	switch {
	case len(r.Removed) > 0:
		fmt.Fprintf(env.Stdout, "%s: removed %s\n", name, cli.Plural(len(r.Removed), "entry of stopgate's", "entries of stopgate's"))
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
