package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/stopgate/stopgate/internal/bench"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/dist"
	"github.com/stopgate/stopgate/internal/settings"
)

// registrationCases time one hook call, detect on an unmatched Read of a
// project of n mappings, as each form gate init could register runs it, beside the
// native program's own row: through the launcher gate init writes, run by
// sh -c as the clients run it (settings.Launcher), through npm's node shim
// (what npx gate runs) and through go tool (the go.mod tool directive;
// that detect is HEAD's, served by a local module proxy). A form that
// cannot be set up here is a row that says why. Each form has a project
// of n mappings of its own: the npm and go tool builds are other builds,
// with config caches of their own, and one sharing a project with another
// would rewrite the cache at every run.
func (o *options) registrationCases(n int) ([]bench.Case, error) {
	var cases []bench.Case
	for _, form := range []struct {
		dir, how string
		cmd      func(root string) (*bench.Cmd, error)
	}{
		{"launcher", "gate init's launcher (sh -c)", func(root string) (*bench.Cmd, error) {
			return &bench.Cmd{Path: "/bin/sh", Args: []string{"-c", settings.Launcher([]string{cli.ShellQuote(o.detect)}, "", "", "")}, Dir: root, Env: o.env(root)}, nil
		}},
		{"npm", "npm's node shim", o.npmShim},
		{"plugin", "the marketplace plugin's hook, bin/ installed (sh -c)", o.pluginHook},
		{"gotool", "go tool", o.goTool},
	} {
		name := fmt.Sprintf("registered as detect, unmatched Read, %s mappings, through %s", count(n), form.how)
		if !o.wants(name) {
			continue
		}
		p, err := bench.WriteProject(filepath.Join(o.tmp, "registered-"+form.dir), n)
		if err != nil {
			return nil, err
		}
		cmd, err := form.cmd(p.Dir)
		if err == nil {
			err = reachesDetect(cmd)
		}
		if err != nil {
			cmd = missing(err.Error()) // the row says why
		}
		cmd.Stdin = func(int) []byte { return p.Unmatched("bench-unmatched") }
		cmd.Check = silent
		cases = append(cases, bench.Case{Name: name, Cmd: cmd})
	}
	return cases, nil
}

// reachesDetect runs cmd once on an input without an event, which detect
// refuses on stderr: an unmatched Read prints nothing, so a route that
// ran no detect at all would be timed as a fast one.
func reachesDetect(cmd *bench.Cmd) error {
	c := exec.Command(cmd.Path, cmd.Args...)
	c.Dir, c.Env, c.Stdin = cmd.Dir, cmd.Env, strings.NewReader("{}")
	out, _ := c.CombinedOutput()
	if !strings.Contains(string(out), "detect: hook input has no hook_event_name") {
		return fmt.Errorf("the route did not reach detect: %q", strings.TrimSpace(string(out)))
	}
	return nil
}

// npmShim lays out an npm install holding the built programs and returns
// node running the shim npm links as node_modules/.bin/detect, in the
// project at root.
func (o *options) npmShim(root string) (*bench.Cmd, error) {
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, err
	}
	dir := filepath.Join(o.tmp, "npm")
	if err := dist.WriteNpmInstall(dir, filepath.Dir(o.detect), runtime.GOOS, runtime.GOARCH); err != nil {
		return nil, err
	}
	return &bench.Cmd{Path: node, Args: []string{filepath.Join(dir, "node_modules", "stopgate", "bin", "detect.js")}, Dir: root, Env: o.env(root)}, nil
}

// goTool makes a Go module whose go.mod has stopgate's tool directives,
// from a local module proxy of the repository's HEAD, and returns go tool
// run in it, for the project at root.
func (o *options) goTool(root string) (*bench.Cmd, error) {
	o.logf("serving HEAD from a local module proxy for go tool")
	const version = "v0.99.0"
	dir := filepath.Join(o.tmp, "gotool")
	if err := dist.ModuleProxy(o.repo, "HEAD", version, filepath.Join(dir, "proxy")); err != nil {
		return nil, err
	}
	env, err := dist.ProxyEnv(o.gocmd, filepath.Join(dir, "proxy"), filepath.Join(dir, "modcache"))
	if err != nil {
		return nil, err
	}
	mod := filepath.Join(dir, "mod")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		return nil, err
	}
	for _, args := range [][]string{{"mod", "init", "example.com/bench"}, {"get", "-tool", dist.Module + "/cmd/...@" + version}, {"tool", "-n", "detect"}} {
		cmd := exec.Command(o.gocmd, args...)
		cmd.Dir, cmd.Env = mod, env
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("go %v: %v: %s", args, err, out)
		}
	}
	// The module cache is read-only: make it removable with the rest.
	o.cleanups = append(o.cleanups, func() {
		c := exec.Command(o.gocmd, "clean", "-modcache")
		c.Env = env
		c.Run()
	})
	// go needs its whole environment; the project is named by the variable.
	return &bench.Cmd{Path: o.gocmd, Args: []string{"tool", "detect"}, Dir: mod, Env: append(env, "CLAUDE_PROJECT_DIR="+root)}, nil
}

// pluginHook is the marketplace plugin's registered PostToolUse command
// (plugins/stopgate/hooks/hooks.json), run by sh -c as the client runs it,
// in the project at root with the programs installed in its bin/: the
// plugin's script searches for them on every event.
func (o *options) pluginHook(root string) (*bench.Cmd, error) {
	plugin, err := filepath.Abs(filepath.Join(o.repo, "plugins", "stopgate"))
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(plugin, "hooks", "hooks.json"))
	if err != nil {
		return nil, err
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string }
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Hooks["PostToolUse"]) == 0 || len(doc.Hooks["PostToolUse"][0].Hooks) == 0 {
		return nil, fmt.Errorf("no PostToolUse hook in the plugin's hooks.json (%v)", err)
	}
	if err := os.MkdirAll(filepath.Join(root, "bin"), 0o755); err != nil {
		return nil, err
	}
	if err := os.Symlink(o.detect, filepath.Join(root, "bin", "detect")); err != nil {
		return nil, err
	}
	env := append(o.env(root), "CLAUDE_PLUGIN_ROOT="+plugin)
	return &bench.Cmd{Path: "/bin/sh", Args: []string{"-c", doc.Hooks["PostToolUse"][0].Hooks[0].Command}, Dir: root, Env: env}, nil
}
