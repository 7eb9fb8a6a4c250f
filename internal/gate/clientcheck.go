package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/trust"
)

// clientFindings checks one client's registration: its file, each hook
// registered or missing, each registered program present, the gate's
// timeout above every validator's, and max_blocks below the client's cap.
func clientFindings(env *cli.Env, ws workspace, cfg *config.Config, c *client.Client) []finding {
	if c.HookFile == "" {
		return nil // no registration of its own: its notes say which it runs
	}
	if c.IsPlugin() {
		return append(pluginFindings(ws, c), clientWallFindings(env, ws, c)...)
	}
	initCmd := `"gate init --client ` + c.Name + `"`
	out := capFinding(ws, cfg, c)
	data, err := os.ReadFile(filepath.Join(ws.root, filepath.FromSlash(c.HookFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return append(out, finding{loc: c.HookFile, msg: "does not exist: no stopgate hook is registered for " + c.Title,
			hint: initCmd + " registers them"})
	}
	if err != nil {
		return append(out, finding{loc: c.HookFile, msg: err.Error()})
	}
	found, err := c.Lookup(data, clientWanted(c, ws.root, binInstall(ws.root, "bin"), true))
	if err != nil {
		return append(out, fileError(c.HookFile, c.Title, err))
	}
	// The project variables the clients set, for a command's program.
	vars := map[string]string{}
	for _, c := range client.All {
		if c.ProjectVar != "" {
			vars[c.ProjectVar] = ws.root
		}
	}
	for _, fd := range found {
		if !fd.Registered {
			out = append(out, unregistered(c.HookFile, fd.Hook, fd.Hook.String()+" is not registered", initCmd))
			continue
		}
		out = append(out, programFinding(env, fd.Command, c.HookFile, ws.root, vars)...)
		out = append(out, earlierLauncher(fd.Command, c.HookFile, initCmd)...)
		fd.Timeout /= c.Unit // in seconds
		out = append(out, timeoutFinding(cfg, fd, c.HookFile, c.Name)...)
	}
	out = append(out, clientEnvFindings(ws, env.Getenv("HOME"), c)...)
	out = append(out, clientWallFindings(env, ws, c)...) // wall.go
	return dedupe(out)
}

// hooksEnv are the clients whose settings hand the hooks an env, and
// whether the file's top-level env counts beside each hook's own: Gemini
// CLI and Qwen Code set a hook's env over their own for it, and Qwen Code
// sets its settings' env where the process has none (read from their
// hook runners and loadEnvironment).
var hooksEnv = map[string]bool{client.Gemini.Name: false, client.Qwen.Name: true}

// clientEnvFindings judges the env c's hook file, and the user's file of
// the same name, hand the hooks as Claude Code's is (switchFindings), and
// the .env files c loads (trust.DotEnv).
func clientEnvFindings(ws workspace, home string, c *client.Client) []finding {
	top, ok := hooksEnv[c.Name]
	if !ok {
		return nil
	}
	var out []finding
	for loc, path := range map[string]string{c.HookFile: filepath.Join(ws.root, c.HookFile), "~/" + c.HookFile: filepath.Join(home, c.HookFile)} {
		data, err := os.ReadFile(path)
		if err != nil || home == "" && loc[0] == '~' {
			continue
		}
		d := settings.Parse(data)
		names := d.HookEnv()
		if top {
			names = append(names, d.Env()...)
		}
		out = append(out, envFindings(loc, names)...)
	}
	slices.SortFunc(out, func(a, b finding) int { return strings.Compare(a.loc, b.loc) })
	for _, f := range trust.DotEnvHookEnv(c.Name, ws.root, home) {
		out = append(out, finding{loc: f.Show, msg: "sets " + strings.Join(f.Env, ", ") + ", which " + c.Title +
			" loads into its environment and hands every hook and validator: it chooses the programs they run",
			hint: "remove it from the file, and set it in the shell that starts the client"})
	}
	return out
}

// envFindings are the variables of the trusted base's environment
// (trust.HookEnv) among names, an env file loc sets for the hooks.
func envFindings(loc string, names []string) []finding {
	env := trust.HookEnv(names)
	if len(env) == 0 {
		return nil
	}
	return []finding{{loc: loc, msg: "env sets " + strings.Join(env, ", ") + ", which every hook and validator runs with: it chooses the programs they run",
		hint: "remove it from env, and set it in the shell that starts the client"}}
}

// capFinding warns when max_blocks would not end a failing loop before the
// client's own cap lets the agent stop unchecked.
func capFinding(ws workspace, cfg *config.Config, c *client.Client) []finding {
	if cfg == nil || c.BlockCap == 0 || cfg.Settings.MaxBlocks < c.BlockCap {
		return nil
	}
	return []finding{{loc: ws.rel(ws.file), warning: true,
		msg: fmt.Sprintf("settings.max_blocks is %d, but %s lets the agent stop after %d consecutive blocks: the loop would end there, unchecked, instead of halting",
			cfg.Settings.MaxBlocks, c.Title, c.BlockCap),
		hint: fmt.Sprintf("set max_blocks below %d", c.BlockCap)}}
}

// checkedClients are the clients `gate check` looks at: the one --client
// names, or every client whose file the project has. A client without a
// file of its own (VS Code agent mode) is checked with the registrations
// it runs: named, with those the project has; else beside one of them.
func checkedClients(root, name string) ([]*client.Client, error) {
	has := func(c *client.Client) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(c.HookFile)))
		return c.HookFile != "" && err == nil
	}
	if name != "" {
		c, err := clientNamed(name)
		if err != nil || c == nil {
			return nil, err
		}
		if c.HookFile != "" {
			return []*client.Client{c}, nil
		}
		return append(slices.DeleteFunc(slices.Clone(c.Runs), func(r *client.Client) bool { return r == client.Claude || !has(r) }), c), nil
	}
	var out []*client.Client
	for _, c := range agentClients {
		if has(c) {
			out = append(out, c)
		}
	}
	for _, c := range agentClients {
		if c.HookFile == "" && slices.ContainsFunc(c.Runs, func(r *client.Client) bool { return slices.Contains(out, r) }) {
			out = append(out, c)
		}
	}
	return out, nil
}
