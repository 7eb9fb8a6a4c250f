package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
)

// runUninstall is `gate uninstall`: it takes out what gate init added (hooks,
// the OS wall, the .gitignore line), each only where it is still as init
// wrote it, keeping every other byte; what was changed since is named.
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
		plan, err = clientUndo(env, c, root, *bin)
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
	// Every file is read and checked before any is written.
	for _, u := range plan {
		if err := u.apply(); err != nil {
			return err
		}
		sayRemoval(env, u.name, u.r, u.had)
	}
	// The state dir's line goes with the last client's set-up.
	if regs := guard.Registrations(root, env.Getenv("HOME"), nil); len(regs) > 0 {
		if line := ignoreLine(root); line != "" {
			fmt.Fprintf(env.Stdout, "%s: kept %s: %s still registers stopgate\n", gitignoreFile, line, regs[0].File)
		}
		return nil
	}
	return removeIgnore(env, root)
}

// claudeUndo plans taking init's hooks, older plain paths and the wall out of Claude's settings.
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
// wrote: its hooks, hooks.json when nothing else is left, the manifest
// while it is init's.
func pluginUndo(dir string) ([]undo, error) {
	base, name := filepath.Dir(dir), filepath.Base(dir)
	hooks, err := undoHooks(client.Claude, base, filepath.ToSlash(filepath.Join(name, pluginHooks)), pluginWanted(dir), nil)
	if err != nil {
		return nil, err
	}
	hooks.gone = bytes.Equal(hooks.out, pluginHooksNew)
	manifest, err := undoSame(base, filepath.ToSlash(filepath.Join(name, pluginManifestFile)), pluginManifest(), "the plugin manifest", "the plugin manifest")
	return []undo{hooks, manifest}, err
}

func uninstallError(name string, err error) error {
	return cli.WithHint(settings.Named(name, err), "nothing was changed: fix the file by hand, then run gate uninstall again")
}

// sayRemoval tells what was taken out of name and what was left, changed since.
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

// undo is what gate uninstall does to one file.
type undo struct {
	base string // the folder name is in, above which nothing is removed
	name string // slash-separated, from base
	had  bool   // the file is there
	out  []byte // its new text, when r.Removed is not empty
	gone bool   // remove the file instead: nothing but stopgate's is left
	r    settings.Removal
}

// clientUndo plans `gate uninstall --client NAME`.
func clientUndo(env *cli.Env, c *client.Client, root, bin string) ([]undo, error) {
	var u undo
	var err error
	if c.IsPlugin() {
		u, err = undoSame(root, c.HookFile, []byte(pluginText(c, bin, binInstall(root, bin))), "the stopgate plugin", "the plugin")
	} else {
		var want []settings.Hook
		for _, in := range routes(root, bin) {
			want = append(want, owned(c, root, in)...)
		}
		u, err = undoHooks(c, root, c.HookFile, want, nil)
	}
	if err != nil || c.Wall == nil {
		return []undo{u}, err
	}
	w, err := undoClientWall(env, c, root)
	return []undo{u, w}, err
}

// undoFile plans what to do with the file name (plan fills u in); nothing when it is absent.
func undoFile(root, name string, plan func(u *undo, data []byte) error) (undo, error) {
	u := undo{base: root, name: name}
	data, err := settings.ReadIfThere(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil || data == nil {
		return u, err
	}
	u.had = true
	if err := plan(&u, data); err != nil {
		return u, uninstallError(name, err)
	}
	return u, nil
}

// undoHooks takes the hooks of want, and the deny rules, out of c's file.
func undoHooks(c *client.Client, root, name string, want []settings.Hook, deny []string) (undo, error) {
	return undoFile(root, name, func(u *undo, data []byte) (err error) {
		u.out, u.r, u.gone, err = c.Remove(data, want, deny)
		return err
	})
}

// undoSame removes the file name while it is byte for byte want.
func undoSame(root, name string, want []byte, removed, left string) (undo, error) {
	return undoFile(root, name, func(u *undo, data []byte) error {
		if bytes.Equal(data, want) {
			u.gone, u.r.Removed = true, []string{removed}
		} else {
			u.r.Left = []string{left + ": it differs from the one gate init writes"}
		}
		return nil
	})
}

// apply writes the new text, or removes the file and the folders left empty.
func (u undo) apply() error {
	if len(u.r.Removed) == 0 {
		return nil
	}
	root := u.base
	path := filepath.Join(root, filepath.FromSlash(u.name))
	if !u.gone {
		if err := settings.WriteFile(path, u.out); err != nil {
			return fmt.Errorf("writing %s: %w", u.name, err)
		}
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", u.name, err)
	}
	for dir := filepath.Dir(path); dir != root && len(dir) > len(root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil { // not empty: someone's
			break
		}
	}
	return nil
}
