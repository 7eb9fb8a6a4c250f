package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/stopgate/stopgate/internal/bench"
)

// registrationCases time one hook call, detect on an unmatched Read of a
// project of n mappings, on each install route, as the route registers
// it: the PostToolUse Read command that gate init (run from that route's
// install) wrote into the project's .claude/settings.json, or the one the
// marketplace plugin's hooks.json holds, run by sh -c with the project's
// variables, as the client runs it. The routes: bin/ (make install
// PREFIX=.), npm (the platform package in node_modules), the go.mod tool
// directive (go tool gate init registers bin/, which go install fills,
// from a local module proxy of HEAD), and the plugin with the programs in
// bin/ or with go.mod's tool directive alone. A route that cannot be set up here is a row that says why. Each
// has a project of its own: each install has its own config cache.
func (o *options) registrationCases(n int) ([]bench.Case, error) {
	var cases []bench.Case
	for _, route := range []struct {
		dir, how string
		setup    func(root string) (command string, env []string, err error)
	}{
		{"bin", "the bin/ route", o.binRoute},
		{"npm", "the npm route", o.npmRoute},
		{"gotool", "the go.mod tool route (bin/ by go install)", o.goToolRoute},
		{"plugin", "the marketplace plugin, bin/ installed", o.pluginRoute},
		{"plugin-gomod", "the marketplace plugin, go.mod's tool only", o.pluginGoModRoute},
	} {
		c, err := o.registrationCase(n, route.dir, route.how, route.setup)
		if err != nil {
			return nil, err
		}
		cases = append(cases, c...)
	}
	if o.before == "" {
		return cases, nil
	}
	// The build before: its gate init registers its own launcher, over its own programs.
	progs := []string{o.before, filepath.Join(filepath.Dir(o.before), "detect"), filepath.Join(filepath.Dir(o.before), "testhook")}
	for _, route := range []struct {
		dir, how string
		setup    func(root string) (command string, env []string, err error)
	}{
		{"bin-before", "the bin/ route, the build before", func(root string) (string, []string, error) {
			return o.installedRoute(root, filepath.Join(root, "bin"), progs...)
		}},
		{"plugin-before", "the marketplace plugin, bin/ installed, the build before", func(root string) (string, []string, error) {
			return o.pluginBeforeRoute(root, progs)
		}},
	} {
		c, err := o.registrationCase(n, route.dir, route.how, route.setup)
		if err != nil {
			return nil, err
		}
		cases = append(cases, c...)
	}
	return cases, nil
}

// pluginBeforeRoute installs the build before's detect in the project's
// bin/ and returns the PostToolUse Read command of the plugin its gate
// init --plugin writes.
func (o *options) pluginBeforeRoute(root string, progs []string) (string, []string, error) {
	if err := copyFile(progs[1], filepath.Join(root, "bin", "detect")); err != nil {
		return "", nil, err
	}
	dir := filepath.Join(o.tmp, "plugin-before")
	env := append(o.env(""), "HOME="+filepath.Join(root, ".home"), "CLAUDE_PROJECT_DIR=")
	if err := runIn(root, env, progs[0], "init", "--plugin", dir, "--no-wall"); err != nil {
		return "", nil, err
	}
	command, err := readCommand(filepath.Join(dir, "hooks", "hooks.json"))
	return command, nil, err
}

// registrationCase is the row of one route (dir names its project), or
// none when -only leaves it out; a route that cannot be set up here is a
// row that says why.
func (o *options) registrationCase(n int, dir, how string, setup func(root string) (string, []string, error)) ([]bench.Case, error) {
	name := fmt.Sprintf("registered as detect, unmatched Read, %s mappings, on %s", count(n), how)
	if !o.wants(name) {
		return nil, nil
	}
	p, err := bench.WriteProject(filepath.Join(o.tmp, "registered-"+dir), n)
	if err != nil {
		return nil, err
	}
	var cmd *bench.Cmd
	command, env, err := setup(p.Dir)
	if err == nil {
		// A route's own environment (go's, for the go.mod tool) or the
		// floors'; the client's variables either way.
		if env == nil {
			env = o.env("")
		}
		env = append(env, "CLAUDE_PROJECT_DIR="+p.Dir, "CLAUDE_PLUGIN_ROOT="+o.plugin())
		cmd = &bench.Cmd{Path: "/bin/sh", Args: []string{"-c", command}, Dir: p.Dir, Env: env}
		err = reachesDetect(cmd)
	}
	if err != nil {
		cmd = missing(err.Error()) // the row says why
	}
	cmd.Stdin = func(int) []byte { return p.Unmatched("bench-unmatched") }
	cmd.Check = silent
	return []bench.Case{{Name: name, Cmd: cmd}}, nil
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

// binRoute copies the built programs into the project's bin/, as make
// install PREFIX=. puts them, and runs that gate init.
func (o *options) binRoute(root string) (string, []string, error) {
	return o.installedRoute(root, filepath.Join(root, "bin"))
}

// npmRoute copies the built programs where npm's platform package puts
// them in the project, and runs that gate init.
func (o *options) npmRoute(root string) (string, []string, error) {
	cpu := runtime.GOARCH
	if cpu == "amd64" {
		cpu = "x64"
	}
	return o.installedRoute(root, filepath.Join(root, "node_modules", "@stopgate", runtime.GOOS+"-"+cpu, "bin"))
}

// installedRoute copies the built programs (or progs, another build's)
// into bin, a folder of the project at root, and runs bin's gate init.
func (o *options) installedRoute(root, bin string, progs ...string) (string, []string, error) {
	if progs == nil {
		progs = []string{o.detect, o.gate, o.th}
	}
	for _, prog := range progs {
		if prog == "" {
			continue // testhook not built
		}
		if err := copyFile(prog, filepath.Join(bin, filepath.Base(prog))); err != nil {
			return "", nil, err
		}
	}
	return o.initRegisters(root, nil, filepath.Join(bin, "gate"), "init", "--no-wall")
}

// goToolRoute makes the project a Go module that pins stopgate with
// go.mod's tool directives (goModule), runs go tool gate init, and
// installs the programs into bin/ as gate init says to: go install at the
// version go.mod pins, with cgo off.
func (o *options) goToolRoute(root string) (string, []string, error) {
	env, version, err := o.goModule(root)
	if err != nil {
		return "", nil, err
	}
	command, _, err := o.initRegisters(root, env, o.gocmd, "tool", "gate", "init", "--no-wall")
	if err != nil {
		return "", nil, err
	}
	bin := filepath.Join(root, "bin")
	if err := runIn(root, append(env, "CGO_ENABLED=0", "GOBIN="+bin), o.gocmd, "install", bench.Module+"/cmd/...@"+version); err != nil {
		return "", nil, err
	}
	return command, nil, settle(filepath.Join(bin, "detect"))
}

// pluginGoModRoute is the marketplace plugin's hook in a Go module that
// pins stopgate with go.mod's tool directives and installed nothing else:
// the plugin's search builds (or finds built) and vets go tool's detect
// on every event.
func (o *options) pluginGoModRoute(root string) (string, []string, error) {
	env, _, err := o.goModule(root)
	if err != nil {
		return "", nil, err
	}
	command, err := readCommand(filepath.Join(o.plugin(), "hooks", "hooks.json"))
	return command, env, err
}

// goModule makes the project at root a Go module whose go.mod has
// stopgate's tool directives, from a local module proxy of HEAD (served
// once), and returns go's environment for it and stopgate's version.
func (o *options) goModule(root string) (env []string, version string, err error) {
	version = "v0.99.0"
	dir := filepath.Join(o.tmp, "gotool")
	if env, err = bench.ProxyEnv(o.gocmd, filepath.Join(dir, "proxy"), filepath.Join(dir, "modcache")); err != nil {
		return nil, "", err
	}
	if _, err := os.Stat(filepath.Join(dir, "proxy")); err != nil {
		o.logf("serving HEAD from a local module proxy for the go.mod tool routes")
		if err := bench.ModuleProxy(o.repo, "HEAD", version, filepath.Join(dir, "proxy")); err != nil {
			return nil, "", err
		}
		// The module cache is read-only: make it removable with the rest
		// (its own: the closure keeps this env, never a nil one).
		modenv := env
		o.cleanups = append(o.cleanups, func() {
			c := exec.Command(o.gocmd, "clean", "-modcache")
			c.Env = modenv
			c.Run()
		})
	}
	for _, args := range [][]string{{"mod", "init", "example.com/bench"}, {"get", "-tool", bench.Module + "/cmd/...@" + version}} {
		if err := runIn(root, env, o.gocmd, args...); err != nil {
			return nil, "", err
		}
	}
	return env, version, nil
}

// pluginRoute installs the built detect in the project's bin/ and returns
// the marketplace plugin's registered PostToolUse Read command.
func (o *options) pluginRoute(root string) (string, []string, error) {
	if err := copyFile(o.detect, filepath.Join(root, "bin", "detect")); err != nil {
		return "", nil, err
	}
	command, err := readCommand(filepath.Join(o.plugin(), "hooks", "hooks.json"))
	return command, nil, err
}

// plugin is a copy of the marketplace plugin's folder in the repository,
// as the client installs it: its launcher keeps go.mod's tool there.
func (o *options) plugin() string {
	dir := filepath.Join(o.tmp, "plugin")
	if _, err := os.Stat(dir); err == nil {
		return dir
	}
	for _, rel := range []string{"bin/detect", "bin/gate", "bin/testhook", "hooks/hooks.json"} {
		if err := copyFile(filepath.Join(o.repo, "plugins", "stopgate", rel), filepath.Join(dir, rel)); err != nil {
			o.logf("copying the plugin: %v", err)
		}
	}
	return dir
}

// initRegisters runs gate init (the program and arguments given) in the
// project at root, with a home of its own (no plugin of the user's), and
// returns the PostToolUse Read command it registered.
func (o *options) initRegisters(root string, env []string, prog string, args ...string) (string, []string, error) {
	if env == nil {
		env = o.env("")
	}
	env = append(env, "HOME="+filepath.Join(root, ".home"), "CLAUDE_PROJECT_DIR=")
	if err := runIn(root, env, prog, args...); err != nil {
		return "", nil, err
	}
	command, err := readCommand(filepath.Join(root, ".claude", "settings.json"))
	return command, nil, err
}

// readCommand returns the command of the PostToolUse hook whose matcher
// names Read, in a settings file or a plugin's hooks.json.
func readCommand(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	var doc struct {
		Hooks map[string][]struct {
			Matcher string
			Hooks   []struct{ Command string }
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	for _, m := range doc.Hooks["PostToolUse"] {
		if strings.Contains(m.Matcher, "Read") && len(m.Hooks) > 0 {
			return m.Hooks[0].Command, nil
		}
	}
	return "", fmt.Errorf("%s registers no PostToolUse Read hook", path)
}

// runIn runs prog with args in dir, its output shown only when it fails.
func runIn(dir string, env []string, prog string, args ...string) error {
	cmd := exec.Command(prog, args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s %v: %w: %s", filepath.Base(prog), args, err, out)
	}
	return nil
}

// copyFile copies the program at src to dst, executable: a symlink would
// make gate init see the program where it was built, not the route.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
