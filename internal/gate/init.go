package gate

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/buildinfo"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
)

// settingsFile is where a project registers its hooks.
var settingsFile = client.Claude.HookFile

// runInit is `gate init [--plugin DIR] [--bin DIR]`: it registers every
// stopgate hook in the project's .claude/settings.json, merging (see
// package settings: untouched bytes stay, a second run changes nothing, the
// write is atomic, a file that is not JSON is refused with its line and
// column), writes a starter mappings.toml if there is none, and merges the
// OS wall into the same settings (wall.go). With --plugin it writes a
// Claude Code plugin in DIR instead, and the wall only into a stopgate
// project's settings: a plugin cannot set the sandbox or permissions.
func runInit(env *cli.Env, args []string) error {
	fl := flags("init")
	plugin := fl.String("plugin", "", "write a Claude Code plugin in `DIR` instead (.claude-plugin/plugin.json, hooks/hooks.json)")
	bin := fl.String("bin", "bin", "the `DIR` holding the stopgate commands: relative to the project root, or absolute")
	clientName := clientFlag(fl, "register with the agent `CLIENT`, in its own file")
	noWall := fl.Bool("no-wall", false, "leave out the OS wall (Claude Code's sandbox settings and deny rules)")
	noTesthook := fl.Bool("no-testhook", false, "leave out the test runner's hooks (testhook)")
	wallOnly := fl.Bool("wall-only", false, "write the OS wall and the starter, no hooks: stopgate's Claude Code plugin registers them")
	if err := parseFlags(env, fl, args); err != nil {
		return err
	}
	c, err := clientNamed(*clientName)
	if err == nil {
		err = ownFile(c)
	}
	if err == nil && *wallOnly && (*noWall || *plugin != "" || c != nil) {
		err = errors.New("--wall-only goes with none of --no-wall, --plugin, --client")
	}
	if err != nil {
		return usageError("init", err)
	}
	if *plugin != "" && c == nil {
		return initPlugin(env, absFrom(env.Dir, *plugin))
	}
	root := project.Root(env.Getenv, "", env.Dir)
	if c == nil && !*noWall {
		if dir := pluginRegisters(env, root); *wallOnly || dir != "" {
			return initWallOnly(env, root, dir)
		}
	}
	in := binInstall(root, *bin)
	given := false
	fl.Visit(func(f *flag.Flag) { given = given || f.Name == "bin" })
	if !given {
		in = installOf(root, *bin, self()) // install.go
	}
	if c != nil {
		return initClient(env, c, root, *bin, in, !*noTesthook) // clients.go
	}
	want := wanted(in.dir, in, root, !*noTesthook)
	if err := initSettings(env, root, want, in.path, *noWall); err != nil {
		return err
	}
	if err := writeIgnore(env, root); err != nil {
		return err
	}
	noteMissing(env, in.path, want, root, in)
	if in.method == "npm" {
		// A bare npx gate, where the packages are not installed (a CI job
		// before npm install), fetches and runs the unrelated npm package
		// named gate.
		fmt.Fprintln(env.Stdout, `ci: claude -p exits 0 and says "success" even when the gate halts; after it, run: npx --no-install gate verdict "$session" (session=$(claude -p … --output-format json | jq -r .session_id); never a bare npx gate, which without npm install runs the npm package named gate)`)
	}
	return nil
}

// initSettings merges the hooks and, unless noWall, the OS wall (wall.go)
// into the project's settings in one pass (register), so a file either
// would refuse is refused before anything is written. The starter
// mappings.toml is written between what it says of the hooks and of the
// wall.
func initSettings(env *cli.Env, root string, want []settings.Hook, bin string, noWall bool) error {
	files := settingsFiles(env, root)
	var wall wallMerge
	withWall := func(data []byte) (out []byte, changed bool, err error) {
		out, wall, err = mergeWall(env, root, data, []string{bin}, programs(want, bin))
		return out, len(wall.added) > 0, err
	}
	if noWall {
		withWall = nil
	}
	if err := register(env, files.shared, elsewhere(env, files, want), nil, settings.Merge, "s", withWall); err != nil {
		return err
	}
	if err := writeStarter(env, root); err != nil {
		return err
	}
	if err := chooseWall(root, !noWall); err != nil {
		return err
	}
	if noWall {
		fmt.Fprintf(env.Stdout, "%s: no OS wall (--no-wall): the tamper guard alone keeps the agent off the protected set\n", files.shared.Name)
		return nil
	}
	wall.say(env, files)
	return nil
}

// noWallMark is the file in the state dir that says gate init was asked
// for no wall (--no-wall). A settings change can take every part of the
// wall out of the files at once, which leaves them looking like a
// project that never had one: ConfigChange lets a change through without
// the wall only where this mark is (the guard protects the state dir).
const noWallMark = "no-wall"

// chooseWall records whether the project at root has the wall: the mark
// removed, or written.
func chooseWall(root string, wall bool) error {
	dir := workspace{root: root, file: config.Path(root, "", root)}.stateDir()
	mark := filepath.Join(dir, noWallMark)
	if wall {
		if err := os.Remove(mark); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(mark, []byte("gate init --no-wall: this project has no OS wall; gate init without it puts the wall up\n"), 0o644)
}

// noWallChosen reports whether gate init was asked for no wall in the
// project whose state dir is dir.
func noWallChosen(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, noWallMark))
	return err == nil
}

// programs are the paths of the programs the hooks of want run from bin.
func programs(want []settings.Hook, bin string) []string {
	var out []string
	for _, h := range want {
		if p := filepath.Join(bin, settings.Program(h.Command)); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// elsewhere leaves out of want the hooks the local or the user's settings
// already register: the client runs every registration, so registering
// them again in the shared settings would run them twice. It says which.
func elsewhere(env *cli.Env, files claudeFiles, want []settings.Hook) []settings.Hook {
	keep := slices.Clone(want)
	for _, src := range files.others() {
		data, err := os.ReadFile(src.Path)
		if err != nil {
			continue
		}
		found, err := settings.Lookup(data, keep)
		if err != nil {
			fmt.Fprintf(env.Stdout, "note: %s: %v (its hooks are not counted)\n", src.Name, err)
			continue
		}
		var rest []settings.Hook
		for _, f := range found {
			if f.Registered {
				fmt.Fprintf(env.Stdout, "%s: %s is registered here; not adding it to %s\n", src.Name, f.Hook, settingsFile)
			} else {
				rest = append(rest, f.Hook)
			}
		}
		keep = rest
	}
	return keep
}

// register merges want into the hook file f, or into initial when there
// is no file yet, with merge: settings.Merge, or mergeCopilot for Copilot
// CLI's own file; then with also, unless nil (the OS wall). The file is
// read once and written once, when either changed it. It says what it
// added, with timeouts in unit, the file's ("s", "ms").
func register(env *cli.Env, f guard.SettingsFile, want []settings.Hook, initial []byte,
	merge func([]byte, []settings.Hook) ([]byte, []settings.Hook, error), unit string,
	also func([]byte) ([]byte, bool, error)) error {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		data = initial
	} else if err != nil {
		return err
	}
	out, added, err := merge(data, want)
	if err != nil {
		return settingsError(f.Name, err)
	}
	changed := len(added) > 0
	if also != nil {
		var more bool
		if out, more, err = also(out); err != nil {
			return err
		}
		changed = changed || more
	}
	if changed {
		if err := settings.WriteFile(f.Path, out); err != nil {
			return fmt.Errorf("writing %s: %w", f.Name, err)
		}
	}
	if len(added) == 0 {
		fmt.Fprintf(env.Stdout, "%s: every stopgate hook is already registered\n", f.Name)
		return nil
	}
	fmt.Fprintf(env.Stdout, "%s: registered %s\n", f.Name, cli.Plural(len(added), "hook", "hooks"))
	for _, h := range added {
		fmt.Fprintf(env.Stdout, "  + %s  (%s, timeout %d%s)\n", h, settings.Shown(h.Command), h.Timeout, unit)
	}
	return nil
}

// settingsError names the file, line and column of a settings file that
// cannot be merged, and says it was left alone.
func settingsError(name string, err error) error {
	return cli.WithHint(settings.Named(name, err), "the file is left as it was: fix it by hand, then run gate init again")
}

// writeStarter writes the starter mappings.toml unless one exists; it never
// replaces a file, even one created a moment ago.
func writeStarter(env *cli.Env, root string) error {
	path := filepath.Join(root, project.ConfigName)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		fmt.Fprintf(env.Stdout, "%s: exists, left as it is\n", project.ConfigName)
		return nil
	}
	if err != nil {
		return err
	}
	_, err = f.WriteString(config.Starter)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return fmt.Errorf("writing %s: %w", project.ConfigName, err)
	}
	fmt.Fprintf(env.Stdout, "%s: wrote a starter; add a [[mapping]] for each prompt to check\n", project.ConfigName)
	return nil
}

// noteMissing tells which hook programs are not in binDir yet, and how to
// put them there: a registered hook whose program is missing fails on
// every event.
func noteMissing(env *cli.Env, binDir string, want []settings.Hook, prefixRoot string, in install) {
	var missing []string
	for _, h := range want {
		if p := settings.Program(h.Command); !executable(filepath.Join(binDir, p)) && !slices.Contains(missing, p) {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return
	}
	fmt.Fprintf(env.Stdout, "note: %s not in %s yet: until they are, a stop halts and says to run: %s\n",
		strings.Join(missing, ", "), project.Display(prefixRoot, binDir), in.command)
}

// varBin returns the shell text hook commands start with, and the
// directory it names. A relative directory goes through the client's
// project variable v, so the settings work wherever the project is checked
// out; an absolute one, or any when the client sets no v, is written
// absolute.
func varBin(v, root, bin string) (prefix, dir string) {
	if filepath.IsAbs(bin) || v == "" {
		dir = absFrom(root, bin)
		return cli.ShellQuote(dir), dir
	}
	rel := filepath.ToSlash(filepath.Clean(bin))
	if rel == "." {
		return `"$` + v + `"`, root
	}
	return `"$` + v + `"/` + cli.ShellQuote(rel), filepath.Join(root, filepath.FromSlash(rel))
}

// shown is path relative to the working directory dir when inside it.
func shown(dir, path string) string {
	if r, ok := project.Rel(dir, path); ok && r != "." {
		return r
	}
	return path
}

func absFrom(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}

// initPlugin writes a Claude Code plugin in dir that `claude --plugin-dir
// DIR` loads: the manifest, unless one exists, and hooks/hooks.json merged
// like settings.json, with commands under ${CLAUDE_PLUGIN_ROOT}/bin.
func initPlugin(env *cli.Env, dir string) error {
	manifest := filepath.Join(dir, pluginManifestFile)
	if _, err := os.Stat(manifest); errors.Is(err, fs.ErrNotExist) {
		if err := settings.WriteFile(manifest, pluginManifest()); err != nil {
			return fmt.Errorf("writing the plugin manifest: %w", err)
		}
		fmt.Fprintf(env.Stdout, "%s: wrote the plugin manifest\n", shown(env.Dir, manifest))
	} else if err != nil {
		return err
	} else {
		fmt.Fprintf(env.Stdout, "%s: exists, left as it is\n", shown(env.Dir, manifest))
	}

	hooksFile := filepath.Join(dir, pluginHooks)
	want := pluginWanted(dir)
	if err := register(env, guard.SettingsFile{Path: hooksFile, Name: shown(env.Dir, hooksFile)}, want, pluginHooksNew, settings.Merge, "s", nil); err != nil {
		return err
	}
	root := project.Root(env.Getenv, "", env.Dir)
	if _, err := os.Stat(filepath.Join(root, project.ConfigName)); err == nil {
		if err := writeWall(env, root, []string{filepath.Join(dir, "bin")}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(env.Stdout, "note: no %s here, so no OS wall: a plugin cannot set the client's sandbox or permissions; run gate init --plugin again in the project to add them to its %s\n", project.ConfigName, settingsFile)
	}
	noteMissing(env, filepath.Join(dir, "bin"), want, env.Dir, binInstall(dir, "bin"))
	fmt.Fprintf(env.Stdout, "load it with: claude --plugin-dir %s\n", cli.ShellQuote(shown(env.Dir, dir)))
	return nil
}

// The plugin's files, from its folder.
var (
	pluginManifestFile = filepath.Join(".claude-plugin", "plugin.json")
	pluginHooks        = filepath.Join("hooks", "hooks.json")
)

// pluginHooksNew is a new hooks.json: a description the client shows.
var pluginHooksNew = []byte("{\n  \"description\": \"stopgate: detect arms validators when a mapped prompt is read; gate runs them when the agent stops\"\n}\n")

// pluginManifest is the manifest gate init --plugin writes.
func pluginManifest() []byte {
	m := map[string]string{
		"name":        "stopgate",
		"description": "Makes the agent prove it followed a prompt before it may stop: mapped prompts arm validators, which run when the agent stops.",
	}
	if v := buildinfo.Read().Release(); v != "" {
		m["version"] = v
	}
	data, _ := json.MarshalIndent(m, "", "  ")
	return append(data, '\n')
}

// pluginWanted is the hooks the plugin in dir registers.
func pluginWanted(dir string) []settings.Hook {
	return wanted(pluginBin, binInstall(dir, "bin"), dir, true)
}
