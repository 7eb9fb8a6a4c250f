package gate

import (
	"fmt"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
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
	if err := parseFlags(env, fl, args); err != nil {
		return err
	}
	c, err := clientNamed(*clientName)
	if err != nil {
		return usageError("uninstall", err)
	}
	root := project.Root(env.Getenv, "", env.Dir)
	var plan []undo
	if c != nil {
		plan, err = clientUndo(env, c, root, *bin) // uninstall_client.go
	} else {
		plan, err = claudeUndo(env, root, *bin)
	}
	if err != nil {
		return err
	}
	// Every file is read and checked before any is written: one that does
	// not parse changes nothing.
	for _, u := range plan {
		if err := u.apply(root); err != nil {
			return err
		}
		sayRemoval(env, u.name, u.r, u.had)
	}
	return removeIgnore(env, root)
}

// claudeUndo plans taking out of .claude/settings.json the hooks gate init
// registers from bin, and the bare paths older gate inits wrote, and the
// OS wall's sandbox keys and deny rules.
func claudeUndo(env *cli.Env, root, bin string) ([]undo, error) {
	in := binInstall(root, bin)
	want := wanted(in.dir, in, root, true)
	for _, h := range want[:len(want):len(want)] {
		h.Command = in.dir + "/" + settings.Program(h.Command)
		want = append(want, h)
	}
	set := projectSet(env, root, filepath.Join(root, project.ConfigName), []string{in.path})
	u, err := undoHooks(client.Claude, root, settingsFile, want, denyRules(set, root, env.Getenv("HOME")))
	return []undo{u}, err
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
