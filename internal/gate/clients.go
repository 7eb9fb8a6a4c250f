package gate

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
)

// agentClients are the clients other than Claude Code that `gate init
// --client NAME` registers stopgate's hooks with, in the client's own
// project file and words. Every hook command names the client (--client)
// and, where the input does not name it, the event (--event).
var agentClients = client.All[1:]

// clientNamed returns the client registered by `--client name`, nil for
// Claude Code, or an error naming the choices.
func clientNamed(name string) (*client.Client, error) {
	c := client.Named(name)
	switch {
	case name == "" || c == client.Claude:
		return nil, nil
	case c == nil:
		return nil, fmt.Errorf("unknown client %q, want one of %v", name, client.Names)
	}
	return c, nil
}

// ownFile refuses to register with, or undo, a client that has no hook
// file of its own (VS Code agent mode), naming the registrations it runs.
func ownFile(c *client.Client) error {
	if c == nil || c.HookFile != "" {
		return nil
	}
	var inits []string
	for _, r := range c.Runs {
		if r == client.Claude {
			inits = append(inits, `"gate init" (`+r.HookFile+`)`)
		} else {
			inits = append(inits, `"gate init --client `+r.Name+`" (`+r.HookFile+`)`)
		}
	}
	return fmt.Errorf("%s has no hook file of its own: it runs the hooks of %s", c.Title, strings.Join(inits, " and "))
}

// clientWanted returns the hooks to register, each a launcher (launch)
// of its program where in installed it, as c's hook commands name that
// folder (install.prefix), timeouts in the file's unit; without testhook,
// its hooks are left out.
func clientWanted(c *client.Client, root string, in install, testhook bool) []settings.Hook {
	prefix := in.prefix(c.ProjectVar, root)
	var out []settings.Hook
	for _, h := range c.Hooks {
		if h.Program == hook.Testhook && !testhook {
			continue
		}
		cmd := launch(c, h.Event, prefix+"/"+h.Program, clientArgs(c, h), in, root, in.shown(root, h.Program))
		out = append(out, settings.Hook{Event: h.Event, Matcher: h.Matcher, Command: cmd, Timeout: h.Timeout * c.Unit})
	}
	return out
}

// args are the arguments the hook command of h passes its program.
func clientArgs(c *client.Client, h client.Hook) string {
	args := strings.TrimSpace(timeoutFlag(h) + " --client " + c.Name)
	if c.EventFlag {
		args += " --event " + h.Event
	}
	return args
}

// owned returns every hook entry gate init writes or wrote for the
// install in: the launchers, and the plain paths older gate inits wrote.
func owned(c *client.Client, root string, in install) []settings.Hook {
	prefix := in.prefix(c.ProjectVar, root)
	out := clientWanted(c, root, in, true)
	for i, h := range c.Hooks {
		old := out[i]
		old.Command = prefix + "/" + h.Program + " " + clientArgs(c, h)
		out = append(out, old)
	}
	return out
}

// initClient is `gate init --client NAME`: the hooks merged into the
// client's own file (as carefully as .claude/settings.json: untouched
// bytes kept, a second run changes nothing, a broken file refused with its
// line and column), the starter mappings.toml, the state dir's .gitignore
// line, and what the user must do about the client's trust gate.
func initClient(env *cli.Env, c *client.Client, root, bin string, in install, testhook bool) error {
	var want []settings.Hook // the plugin registers no hook entries
	if c.IsPlugin() {
		in = binInstall(root, bin) // the plugin runs bin's programs
	}
	if c.Wall != nil {
		if err := c.Wall.Ready(root); err != nil {
			return err // before anything is written
		}
	}
	if c.IsPlugin() {
		if err := writePlugin(env, c, root, bin, in); err != nil {
			return err
		}
	} else {
		want = clientWanted(c, root, in, testhook)
		unit := map[int]string{1: "s", 1000: "ms"}[c.Unit]
		if err := register(env, guard.SettingsFile{Path: filepath.Join(root, filepath.FromSlash(c.HookFile)), Name: c.HookFile}, want, c.NewFile(), c.Merge, unit, nil); err != nil {
			return err
		}
	}
	if err := writeStarter(env, root); err != nil {
		return err
	}
	if err := writeIgnore(env, root); err != nil {
		return err
	}
	noteMissing(env, in.path, want, root, in)
	if err := initClientWall(env, c, root); err != nil { // wall.go
		return err
	}
	label := "trust"
	if c.IsPlugin() {
		label = "note"
	}
	fmt.Fprintf(env.Stdout, "%s: %s\n", label, c.Trust)
	return nil
}
