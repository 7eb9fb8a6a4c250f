package gate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/buildinfo"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/reuse"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/stop"
	"github.com/stopgate/stopgate/internal/telemetry"
	"github.com/stopgate/stopgate/internal/trust"
	"github.com/stopgate/stopgate/internal/validator"
)

const (
	noWallMark    = "no-wall" // gate init --no-wall was chosen: only then may ConfigChange let the wall go
	gitignoreFile = ".gitignore"
	projectBin    = `"$CLAUDE_PROJECT_DIR"/bin`
	pluginBin     = `"${CLAUDE_PLUGIN_ROOT}"/bin`
	npmBin        = guard.NpmScope + "/*/bin" // a glob: the settings are shared by machines of every platform
	goModule      = "github.com/stopgate/stopgate"
	// goPinned is the version go.mod pins: a bare go install builds what the agent can write (replace, vendor/, go.work).
	goPinned    = "@$(go list -m -f '{{.Version}}' " + goModule + ")"
	platform    = "@PLATFORM@" // stands for the machine's npm platform, put in from uname
	maxSettings = 16 << 20     // bounds a settings file's read, far above any real one
)

var (
	settingsFile       = client.Claude.HookFile
	pluginManifestFile = filepath.Join(".claude-plugin", "plugin.json")
	pluginHooks        = filepath.Join("hooks", "hooks.json")
	// pluginHooksNew is a new hooks.json: a description the client shows.
	pluginHooksNew = []byte("{\n  \"description\": \"stopgate: detect arms validators when a mapped prompt is read; gate runs them when the agent stops\"\n}\n")
	agentClients   = client.All[1:]                                                               // the clients other than Claude Code
	npmPlatforms   = []string{"linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"}           // dist.Platforms (install_test.go keeps the two equal)
	timeoutFlag    = regexp.MustCompile(`(?:^|\s)(?:-+timeout=|--?timeout\s+)([+-]?\d+)(?:\s|$)`) // a command's --timeout N (or -timeout=N)
	replaceLine    = regexp.MustCompile(`(?m)^[ \t]*replace(\s|$)`)                               // go.mod's first replace directive
	// hooksEnv are the clients that hand the hooks an env, and whether the top-level env counts too.
	hooksEnv = map[string]bool{client.Gemini.Name: false, client.Qwen.Name: true}
)

// runInit is `gate init`: a client's hooks (Claude Code's with the OS wall), the starter and .gitignore; or a plugin.
func runInit(env *cli.Env, args []string) error {
	fl := flags("init")
	plugin := fl.String("plugin", "", "write a Claude Code plugin in `DIR` instead (.claude-plugin/plugin.json, hooks/hooks.json)")
	bin := fl.String("bin", "bin", "the `DIR` holding the stopgate commands: relative to the project root, or absolute")
	clientName := clientFlag(fl, "register with the agent `CLIENT`, in its own file")
	noWall := fl.Bool("no-wall", false, "leave out the OS wall (Claude Code's sandbox settings and deny rules)")
	noTesthook := fl.Bool("no-testhook", false, "leave out the test runner's hooks (testhook)")
	wallOnly := fl.Bool("wall-only", false, "write the OS wall and the starter, no hooks: stopgate's Claude Code plugin registers them")
	if _, err := parseAtMost(env, fl, args, 0); err != nil {
		return err
	}
	c, err := ownFile(*clientName)
	if err == nil && *wallOnly && (*noWall || *plugin != "" || c != client.Claude) {
		err = errors.New("--wall-only goes with none of --no-wall, --plugin, --client")
	}
	if err != nil {
		return usageError("init", err)
	}
	if *plugin != "" && c == client.Claude {
		return initPlugin(env, absFrom(env.Dir, *plugin))
	}
	root := project.Root(env.Getenv, "", env.Dir)
	if c == client.Claude && !*noWall {
		files, home := settingsFiles(env, root), env.Getenv("HOME")
		if dir := installedPlugin(home, files.texts, files.registrations(root, home)); *wallOnly || dir != "" {
			if dir != "" { // the plugin registers the hooks: here the starter, the wall and .gitignore
				fmt.Fprintf(env.Stdout, "%s: no hooks: stopgate's plugin registers them (%s)\n", settingsFile, dir)
			}
			if err := writeStarter(env, root); err != nil {
				return err
			}
			if err := chooseWall(root, true); err != nil {
				return err
			}
			if err := writeWall(env, root, nil); err != nil {
				return err
			}
			return editIgnore(env, root, true)
		}
	}
	in := binInstall(root, *bin) // the plugin of a client runs bin's programs
	given := false
	fl.Visit(func(f *flag.Flag) { given = given || f.Name == "bin" })
	if !given && !c.IsPlugin() {
		in = installOf(root, *bin, self())
	}
	return initClient(env, c, root, *bin, in, !*noTesthook, !*noWall)
}

// chooseWall records whether the project at root has the wall.
func chooseWall(root string, wall bool) error {
	mark := filepath.Join(workspace{root: root, file: config.Path(root, "", root)}.stateDir(), noWallMark)
	if wall {
		if err := os.Remove(mark); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	return settings.WriteFile(mark, []byte("gate init --no-wall: this project has no OS wall; gate init without it puts the wall up\n"))
}

func programs(want []settings.Hook, bin string) []string {
	var out []string
	for _, h := range want {
		if p := filepath.Join(bin, settings.Program(h.Command)); !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// elsewhere leaves out the hooks other settings already register (they would run twice).
func elsewhere(env *cli.Env, files *claudeSettings, want []settings.Hook) []settings.Hook {
	keep := slices.Clone(want)
	for i, src := range files.texts {
		if i == files.at || src.doc == nil {
			continue
		}
		found, err := src.doc.Lookup(keep)
		if err != nil {
			fmt.Fprintf(env.Stdout, "note: %s: %v (its hooks are not counted)\n", src.Name, err)
			continue
		}
		keep = nil
		for _, f := range found {
			if f.Registered {
				fmt.Fprintf(env.Stdout, "%s: %s is registered here; not adding it to %s\n", src.Name, f.Hook, settingsFile)
			} else {
				keep = append(keep, f.Hook)
			}
		}
	}
	return keep
}

// register merges want, then also unless nil, into c's hook file f (initial if absent) and says what it added.
func register(env *cli.Env, c *client.Client, f guard.SettingsFile, want []settings.Hook, initial []byte,
	also func([]byte) ([]byte, error)) error {
	var added []settings.Hook
	err := edit(f, initial, func(data []byte) (out []byte, err error) {
		if out, added, err = c.Merge(data, want); err != nil {
			return nil, settingsError(f.Name, err)
		}
		if also != nil {
			return also(out)
		}
		return out, nil
	})
	if err != nil {
		return err
	}
	if len(added) == 0 {
		fmt.Fprintf(env.Stdout, "%s: every stopgate hook is already registered\n", f.Name)
		return nil
	}
	fmt.Fprintf(env.Stdout, "%s: registered %s\n", f.Name, cli.Plural(len(added), "hook", "hooks"))
	for _, h := range added {
		fmt.Fprintf(env.Stdout, "  + %s  (%s, timeout %d%s)\n", h, settings.Shown(h.Command), h.Timeout, map[int]string{1: "s", 1000: "ms"}[c.Unit()])
	}
	return nil
}

// edit rewrites the file f (initial if absent) as change has it, once and only if changed.
func edit(f guard.SettingsFile, initial []byte, change func([]byte) ([]byte, error)) error {
	data, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		data = initial
	} else if err != nil {
		return err
	}
	out, err := change(data)
	if err != nil || bytes.Equal(out, data) { // each merge returns its input when it adds nothing
		return err
	}
	if err := settings.WriteFile(f.Path, out); err != nil {
		return fmt.Errorf("writing %s: %w", f.Name, err)
	}
	return nil
}

func settingsError(name string, err error) error {
	return cli.WithHint(settings.Named(name, err), "the file is left as it was: fix it by hand, then run gate init again")
}

// writeStarter writes the starter mappings.toml unless one exists.
func writeStarter(env *cli.Env, root string) error {
	return writeOnce(env, filepath.Join(root, project.ConfigName), project.ConfigName, []byte(config.Starter),
		"wrote a starter; add a [[mapping]] for each prompt to check", "exists, left as it is")
}

// writeOnce writes data to path, named name, unless something is there, and says which.
func writeOnce(env *cli.Env, path, name string, data []byte, wrote, kept string) error {
	said := kept
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		if err := settings.WriteFile(path, data); err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		said = wrote
	} else if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: %s\n", name, said)
	return nil
}

// noteMissing tells which hook programs are not in binDir yet, and how to put them there.
func noteMissing(env *cli.Env, binDir string, want []settings.Hook, prefixRoot string, in install) {
	missing := each(programs(want, binDir), func(p string) string {
		if executable(p) {
			return "" // there: left out
		}
		return filepath.Base(p)
	})
	if len(missing) > 0 {
		fmt.Fprintf(env.Stdout, "note: %s not in %s yet: until they are, a stop halts and says to run: %s\n",
			strings.Join(missing, ", "), project.Display(prefixRoot, binDir), in.command)
	}
}

// varBin returns the shell prefix of hook commands and its folder; relative bin goes through v.
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

func absFrom(dir, path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(dir, path)
}

// initPlugin writes a Claude Code plugin in dir: its manifest (once) and hooks/hooks.json.
func initPlugin(env *cli.Env, dir string) error {
	manifest := filepath.Join(dir, pluginManifestFile)
	if err := writeOnce(env, manifest, project.Display(env.Dir, manifest), pluginManifest(), "wrote the plugin manifest", "exists, left as it is"); err != nil {
		return err
	}
	hooksFile := filepath.Join(dir, pluginHooks)
	want := pluginWanted(dir)
	if err := register(env, client.Claude, guard.SettingsFile{Path: hooksFile, Name: project.Display(env.Dir, hooksFile)}, want, pluginHooksNew, nil); err != nil {
		return err
	}
	root := project.Root(env.Getenv, "", env.Dir)
	if exists(filepath.Join(root, project.ConfigName)) {
		if err := writeWall(env, root, []string{filepath.Join(dir, "bin")}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(env.Stdout, "note: no %s here, so no OS wall: a plugin cannot set the client's sandbox or permissions; run gate init --plugin again in the project to add them to its %s\n", project.ConfigName, settingsFile)
	}
	noteMissing(env, filepath.Join(dir, "bin"), want, env.Dir, binInstall(dir, "bin"))
	fmt.Fprintf(env.Stdout, "load it with: claude --plugin-dir %s\n", cli.ShellQuote(project.Display(env.Dir, dir)))
	return nil
}

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

func pluginWanted(dir string) []settings.Hook {
	in := binInstall(dir, "bin")
	in.dir = pluginBin // the plugin's hooks search (candidates)
	return hooksOf(client.Claude, in, dir, true)
}

// clientNamed returns the client of `--client name`, Claude Code for "".
func clientNamed(name string) (*client.Client, error) {
	if c := client.Named(cmp.Or(name, client.Claude.Name)); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("unknown client %q, want one of %v", name, client.Names)
}

// ownFile is clientNamed, refusing a client without a hook file of its own (VS Code) and naming what it runs.
func ownFile(name string) (*client.Client, error) {
	c, err := clientNamed(name)
	if err != nil || c.HookFile != "" {
		return c, err
	}
	inits := each(c.Runs, func(r *client.Client) string { // Claude Code's needs no --client
		return strings.Replace(`"gate init --client `+r.Name+`" (`+r.HookFile+`)`, " --client claude", "", 1)
	})
	return nil, fmt.Errorf("%s has no hook file of its own: it runs the hooks of %s", c.Title, strings.Join(inits, " and "))
}

// owned is every hook entry init writes or wrote for in: older ones ran bin/PROGRAM (a client's with its arguments).
func owned(c *client.Client, root string, in install) []settings.Hook {
	bin := in.prefix(c.ProjectVar, root)
	hooks := hooksOf(c, in, root, true)
	for _, h := range slices.Clone(hooks) {
		plain := bin + "/" + settings.Program(h.Command)
		if c != client.Claude {
			plain += " " + settings.Args(h.Command)
		}
		h.Command = plain
		hooks = append(hooks, h)
	}
	return hooks
}

// initClient registers c's hooks (Claude Code's with the OS wall, in one write), the starter, c's wall, .gitignore.
func initClient(env *cli.Env, c *client.Client, root, bin string, in install, testhook, wall bool) error {
	if c.Wall != nil {
		if err := c.Wall.Ready(root); err != nil {
			return err // before anything is written
		}
	}
	want, files := hooksOf(c, in, root, testhook), settingsFiles(env, root) // a plugin's: none
	var merged *wallMerge
	var err error
	switch {
	case c.IsPlugin(): // written unless the file is there; one that differs is never overwritten
		path, text := filepath.Join(root, filepath.FromSlash(c.HookFile)), pluginText(c, bin, in)
		if data, rerr := settings.ReadIfThere(path); rerr != nil || data != nil && string(data) != text {
			return cmp.Or(rerr, cli.WithHint(fmt.Errorf("%s: exists and differs from the plugin this gate writes", c.HookFile),
				"the file is left as it was: remove it (or compare it with a fresh one) and run gate init --client "+c.Name+" again"))
		}
		err = writeOnce(env, path, c.HookFile, []byte(text),
			"wrote the stopgate plugin (detect on tool.execute.before/after, gate on session.idle)", "the stopgate plugin is already there")
	case c != client.Claude:
		err = register(env, c, guard.SettingsFile{Path: filepath.Join(root, filepath.FromSlash(c.HookFile)), Name: c.HookFile}, want, c.NewFile(), nil)
	case wall:
		merged = wallFor(env, root, []string{in.path}, programs(want, in.path))
		err = register(env, c, files.shared(), elsewhere(env, files, want), nil, merged.merge)
	default:
		err = register(env, c, files.shared(), elsewhere(env, files, want), nil, nil)
	}
	if err == nil {
		err = writeStarter(env, root)
	}
	if err == nil && c == client.Claude {
		err = chooseWall(root, wall)
	}
	switch {
	case err != nil:
		return err
	case c != client.Claude: // its wall is its own file's, written last
	case wall:
		merged.say(env, files)
	default:
		fmt.Fprintf(env.Stdout, "%s: no OS wall (--no-wall): the tamper guard alone keeps the agent off the protected set\n", settingsFile)
	}
	if err := editIgnore(env, root, true); err != nil {
		return err
	}
	noteMissing(env, in.path, want, root, in)
	if c.Wall != nil { // the client's own (client.Wall); Claude Code's is in its hook file
		if set := projectSet(env, root, nil); set.Empty() {
			fmt.Fprintf(env.Stdout, "%s: no wall: [settings] protect = [] protects nothing\n", c.Title)
		} else if err := c.Wall.Up(env.Stdout, root, wallPaths(set)); err != nil {
			return err
		}
	}
	if c.Trust != "" {
		fmt.Fprintf(env.Stdout, "%s: %s\n", map[bool]string{false: "trust", true: "note"}[c.IsPlugin()], c.Trust)
	}
	if c == client.Claude && in.method == "npm" {
		// A bare npx gate without npm install runs the npm package named gate.
		fmt.Fprintln(env.Stdout, `ci: claude -p exits 0 and says "success" even when the gate halts; after it, run: npx --no-install gate verdict "$session" (session=$(claude -p … --output-format json | jq -r .session_id); never a bare npx gate, which without npm install runs the npm package named gate)`)
	}
	return nil
}

// hooksOf returns c's hooks to register, launchers of the programs where in put them.
func hooksOf(c *client.Client, in install, root string, testhook bool) []settings.Hook {
	bin := in.prefix(c.ProjectVar, root)
	var out []settings.Hook
	for _, r := range c.Hooks {
		if !slices.Contains(hook.Handles[r.Program], c.Event(r.Event)) || r.Program == hook.Testhook && !testhook {
			continue
		}
		args := ""
		if r.Program == hook.Gate {
			args = " --timeout " + strconv.Itoa(r.Timeout) // to answer before the client kills it
		}
		if c != client.Claude {
			args += " --client " + c.Name
		}
		if c.EventFlag {
			args += " --event " + r.Event
		}
		cmd := launch(c, r.Event, candidates(bin, r.Program), strings.TrimSpace(args), in, root, in.shown(root, r.Program))
		h := settings.Hook{Event: r.Event, Matcher: r.Matcher, Command: cmd, Timeout: r.Timeout * c.Unit()}
		if c == client.Claude && r.Program == hook.Gate && (r.Event == hook.Stop || r.Event == hook.SubagentStop) {
			h.StatusMessage = "stopgate: checking the prompt's acceptance criteria…"
		}
		if c == client.Claude && r.Program == hook.Detect && guards(r.Event) {
			h.OnFailure = "block" // a guard that cannot start or times out refuses the call
		}
		out = append(out, h)
	}
	return out
}

func guards(event string) bool { return event == hook.PreToolUse || event == hook.PreSkillShellCommand }

// expected is every hook gate init registers, to look up (settings.Doc.Lookup).
func expected() []settings.Hook { return hooksOf(client.Claude, install{dir: projectBin}, "", true) }

// candidates are the paths the launcher of prog under bin tries, in order: the plugin's try the project's npm and bin/ programs, then the go.mod tool its script kept, before the script (docs/architecture.md).
func candidates(bin, prog string) []string {
	if bin == pluginBin {
		return []string{`"$CLAUDE_PROJECT_DIR"/` + npmBin + "/" + prog, projectBin + "/" + prog,
			`"${CLAUDE_PLUGIN_ROOT}"/cache"$CLAUDE_PROJECT_DIR"/` + prog, bin + "/" + prog}
	}
	return []string{bin + "/" + prog}
}

// ignoreLine is the state dir's .gitignore line, "" when it is outside the project.
func ignoreLine(root string) string {
	dir, _ := config.ReadStateDir(filepath.Join(root, project.ConfigName), root)
	rel, ok := project.Rel(root, dir)
	if !ok || rel == "." {
		return ""
	}
	return "/" + rel + "/"
}

// editIgnore adds the state dir's line to .gitignore once, or takes it out; a file left blank goes.
func editIgnore(env *cli.Env, root string, add bool) error {
	line := ignoreLine(root)
	if line == "" {
		return nil
	}
	path := filepath.Join(root, gitignoreFile)
	data, err := settings.ReadIfThere(path)
	if err != nil {
		return err
	}
	lines := strings.SplitAfter(string(data), "\n")
	at := -1 // the line to take out: the first line, else the last
	for i, l := range lines {
		if l == line+"\n" && at != 0 {
			at = i
		}
	}
	said := "removed " + line
	switch {
	case add && slices.ContainsFunc(lines, func(l string) bool { return strings.Trim(strings.TrimSpace(l), "/") == strings.Trim(line, "/") }):
		fmt.Fprintf(env.Stdout, "%s: the state dir %s is already ignored\n", gitignoreFile, line)
		return nil
	case add:
		if len(data) > 0 && data[len(data)-1] != '\n' {
			data = append(data, '\n')
		}
		data, said = append(data, line+"\n"...), "added "+line+" (the state dir is this machine's, not the team's)"
	case at < 0:
		return nil
	default:
		data = []byte(strings.Join(slices.Delete(lines, at, at+1), ""))
	}
	if len(bytes.TrimSpace(data)) == 0 {
		err = os.Remove(path)
	} else {
		err = settings.WriteFile(path, data)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", gitignoreFile, err)
	}
	fmt.Fprintf(env.Stdout, "%s: %s\n", gitignoreFile, said)
	return nil
}

// installedPlugin is the folder of the marketplace plugin stopgate@MARKETPLACE the settings enable; "" for none, or when regs register Claude Code's hooks.
func installedPlugin(home string, files []settingsText, regs []guard.Registered) string {
	if claudeRegistered(regs) {
		return ""
	}
	enabled := map[string]bool{}
	for _, f := range files {
		var s struct{ EnabledPlugins map[string]bool }
		if json.Unmarshal(f.data, &s) == nil {
			maps.Copy(enabled, s.EnabledPlugins)
		}
	}
	var installed struct {
		Plugins map[string][]struct{ InstallPath string }
	}
	data, err := regular.ReadFile(filepath.Join(home, ".claude", "plugins", "installed_plugins.json"), maxSettings)
	if home == "" || err != nil || json.Unmarshal(data, &installed) != nil {
		return ""
	}
	for _, key := range slices.Sorted(maps.Keys(enabled)) {
		for _, in := range installed.Plugins[key] {
			if enabled[key] && strings.HasPrefix(key, "stopgate@") && exists(filepath.Join(in.InstallPath, pluginHooks)) {
				return in.InstallPath
			}
		}
	}
	return ""
}

func pluginText(c *client.Client, bin string, in install) string {
	return c.PluginText(filepath.ToSlash(bin), missingText(in, filepath.ToSlash(filepath.Join(bin, "gate"))))
}

// runUninstall is `gate uninstall`: what init added, where still as init wrote it, every other byte kept.
func runUninstall(env *cli.Env, args []string) error {
	fl := flags("uninstall")
	bin := fl.String("bin", "bin", "the `DIR` given to gate init --bin")
	clientName := clientFlag(fl, "undo gate init --client `CLIENT`")
	plugin := fl.String("plugin", "", "undo gate init --plugin `DIR`: its files there, and the OS wall it added here")
	if _, err := parseAtMost(env, fl, args, 0); err != nil {
		return err
	}
	c, err := ownFile(*clientName)
	if err != nil {
		return usageError("uninstall", err)
	}
	root := project.Root(env.Getenv, "", env.Dir)
	plan, err := clientUndo(env, c, root, *bin, *plugin)
	if err != nil {
		return err
	}
	for _, u := range plan {
		if err := u.do(env); err != nil {
			return err
		}
	}
	// The state dir's line goes with the last client's set-up.
	if regs := guard.Registrations(root, env.Getenv("HOME"), nil); len(regs) > 0 {
		if line := ignoreLine(root); line != "" {
			fmt.Fprintf(env.Stdout, "%s: kept %s: %s still registers stopgate\n", gitignoreFile, line, regs[0].File)
		}
		return nil
	}
	return editIgnore(env, root, false)
}

// do writes the new text, or removes the file and the folders left empty; it tells what it took out and what it left.
func (u undo) do(env *cli.Env) error {
	path := filepath.Join(u.base, filepath.FromSlash(u.name))
	switch {
	case len(u.r.Removed) == 0:
	case !u.gone:
		if err := settings.WriteFile(path, u.out); err != nil {
			return fmt.Errorf("writing %s: %w", u.name, err)
		}
	default:
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing %s: %w", u.name, err)
		}
		for dir := filepath.Dir(path); dir != u.base && len(dir) > len(u.base); dir = filepath.Dir(dir) {
			if os.Remove(dir) != nil { // not empty: someone's
				break
			}
		}
	}
	switch {
	case len(u.r.Removed) > 0:
		fmt.Fprintf(env.Stdout, "%s: removed %s\n", u.name, cli.Plural(len(u.r.Removed), "entry of stopgate's", "entries of stopgate's"))
		for _, s := range u.r.Removed {
			fmt.Fprintf(env.Stdout, "  - %s\n", s)
		}
	case u.had:
		fmt.Fprintf(env.Stdout, "%s: nothing of stopgate's as gate init wrote it\n", u.name)
	}
	for _, l := range u.r.Left {
		fmt.Fprintf(env.Stdout, "%s: left %s: it was changed since; remove it by hand if it should go\n", u.name, l)
	}
	return nil
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

// clientUndo plans gate uninstall: c's hooks, older plain paths, the walls, and the plugin in dir plugin. Every file is read and checked before any is written.
func clientUndo(env *cli.Env, c *client.Client, root, bin, plugin string) ([]undo, error) {
	var bins []string // the programs' folders of every released platform package, and init's
	for _, pkg := range npmPlatforms {
		bins = append(bins, filepath.Join(root, filepath.FromSlash(guard.NpmScope), pkg, "bin"))
	}
	if plugin != "" {
		bins = append(bins, filepath.Join(absFrom(env.Dir, plugin), "bin"))
	}
	var want []settings.Hook
	for _, in := range []install{binInstall(root, bin), npmProject(""), installOf(root, bin, self())} { // every route init may have taken
		want = append(want, owned(c, root, in)...)
		if in.path != "" {
			bins = append(bins, in.path)
		}
	}
	var deny []string // Claude Code's wall is in its hook file
	if c == client.Claude {
		deny = denyRules(projectSet(env, root, bins), root, env.Getenv("HOME"))
	}
	remove := same([]byte(pluginText(c, bin, binInstall(root, bin))), "the stopgate plugin", "the plugin")
	if !c.IsPlugin() {
		remove = func(data []byte) ([]byte, settings.Removal, bool, error) { return c.Remove(data, want, deny) }
	}
	u, err := undoFile(root, c.HookFile, remove)
	plan := []undo{u}
	if err == nil && c.Wall != nil {
		u, err = undoFile(root, c.Wall.File(), func(data []byte) ([]byte, settings.Removal, bool, error) {
			return c.Wall.Remove(data, root, wallPaths(projectSet(env, root, nil)))
		})
		plan = append(plan, u)
	}
	if err != nil || plugin == "" {
		return plan, err
	}
	// The plugin's hooks, hooks.json left empty, and the manifest while init's.
	dir := absFrom(env.Dir, plugin)
	base, name := filepath.Dir(dir), filepath.Base(dir)
	hooks, err := undoFile(base, filepath.ToSlash(filepath.Join(name, pluginHooks)), func(data []byte) ([]byte, settings.Removal, bool, error) {
		return client.Claude.Remove(data, pluginWanted(dir), nil)
	})
	if err != nil {
		return nil, err
	}
	hooks.gone = bytes.Equal(hooks.out, pluginHooksNew)
	manifest, err := undoFile(base, filepath.ToSlash(filepath.Join(name, pluginManifestFile)), same(pluginManifest(), "the plugin manifest", "the plugin manifest"))
	return append(plan, hooks, manifest), err
}

// undoFile plans what remove does to the file name (the text left, what it took out and left, whether the file goes); nothing when it is absent.
func undoFile(root, name string, remove func([]byte) ([]byte, settings.Removal, bool, error)) (undo, error) {
	u := undo{base: root, name: name}
	data, err := settings.ReadIfThere(filepath.Join(root, filepath.FromSlash(name)))
	if err != nil || data == nil {
		return u, err
	}
	u.had = true
	if u.out, u.r, u.gone, err = remove(data); err != nil {
		return u, cli.WithHint(settings.Named(name, err), "nothing was changed: fix the file by hand, then run gate uninstall again")
	}
	return u, nil
}

// same removes a file while it is byte for byte want.
func same(want []byte, removed, left string) func([]byte) ([]byte, settings.Removal, bool, error) {
	return func(data []byte) ([]byte, settings.Removal, bool, error) {
		if bytes.Equal(data, want) {
			return nil, settings.Removal{Removed: []string{removed}}, true, nil
		}
		return nil, settings.Removal{Left: []string{left + ": it differs from the one gate init writes"}}, false, nil
	}
}

// install is how stopgate is installed for a project, and how a machine without it gets it.
type install struct {
	method  string // "npm", "go tool", "bin" (a folder of the project), "path" (one outside it)
	dir     string // the bin dir as a shell prefix, e.g. "$CLAUDE_PROJECT_DIR"/bin
	path    string // the directory dir names here
	command string // the one command that installs it here
}

// installOf says how the gate at exe is installed without --bin: npm, go tool or bin (never a PATH, one machine's).
func installOf(root, bin, exe string) install {
	dir := filepath.Dir(exe) // node_modules/@stopgate/PLATFORM/bin, when npm installed it
	scope := filepath.Dir(filepath.Dir(dir))
	if filepath.Base(dir) == "bin" && filepath.Base(scope) == "@stopgate" && filepath.Base(filepath.Dir(scope)) == "node_modules" {
		if filepath.Dir(filepath.Dir(scope)) == root {
			return npmProject(dir)
		}
		return install{method: "npm", dir: cli.ShellQuote(dir), path: dir, command: "npm install -g stopgate"}
	}
	if goTool(root) != nil {
		// go tool costs 100s of ms a call: the hooks run go install's bin at go.mod's version (docs/architecture.md).
		inst := binInstall(root, bin)
		if rel, ok := project.Rel(root, inst.path); ok {
			inst.method = "go tool"
			inst.command = goInstall(`"$PWD"/`+cli.ShellQuote(filepath.ToSlash(rel)), goPinned)
		}
		return inst
	}
	return binInstall(root, bin)
}

// shown is the program prog as a missing one is named.
func (in install) shown(root, prog string) string {
	if in.dir == npmProject("").dir {
		return guard.NpmScope + "/" + platform + "/bin/" + prog
	}
	return project.Display(root, filepath.Join(in.path, prog))
}

// prefix is in's folder as the hooks of a client with project variable v name it.
func (in install) prefix(v, root string) string {
	if v == client.Claude.ProjectVar {
		return in.dir // as given: an absolute --bin stays absolute
	}
	bin := in.path
	if rel, ok := project.Rel(root, in.path); ok {
		bin = rel
	}
	if in.dir == npmProject("").dir {
		p, _ := varBin(v, root, ".")
		return p + "/" + npmBin
	}
	p, _ := varBin(v, root, bin)
	return p
}

// goInstall installs the programs into gobin at version, statically as make build does (libc costs +1 ms a call).
func goInstall(gobin, version string) string {
	return "CGO_ENABLED=0 GOBIN=" + gobin + " go install " + goModule + "/cmd/..." + version
}

// npmProject is the project's npm packages, programs in dir ("": only the glob is known).
func npmProject(dir string) install {
	return install{method: "npm", dir: `"$CLAUDE_PROJECT_DIR"/` + npmBin, path: dir, command: "npm install"}
}

// goTool is the go.mod at root when it has stopgate's gate as a tool (nil: none).
func goTool(root string) []byte {
	data, _ := regular.ReadFile(filepath.Join(root, "go.mod"), maxSettings) // none, or not a regular file: no tool
	for line := range strings.Lines(string(data)) {
		if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] == goModule+"/cmd/gate" && (len(f) == 1 || f[0] == "tool") {
			return data
		}
	}
	return nil
}

// binInstall is stopgate in bin, relative to root or absolute.
func binInstall(root, bin string) install {
	prefix, dir := varBin("CLAUDE_PROJECT_DIR", root, bin) // as Claude Code's hook commands start
	v := "@latest"
	if r := buildinfo.Read().Release(); r != "" {
		v = "@v" + r
	}
	rel, ok := project.Rel(root, dir)
	switch {
	case ok && filepath.Base(rel) == "bin":
		return install{method: "bin", dir: prefix, path: dir, command: "make install PREFIX=" + cli.ShellQuote(filepath.ToSlash(filepath.Dir(rel)))}
	case ok:
		return install{method: "bin", dir: prefix, path: dir, command: goInstall(`"$PWD"/`+cli.ShellQuote(filepath.ToSlash(rel)), v)}
	}
	return install{method: "path", dir: prefix, path: dir, command: goInstall(cli.ShellQuote(dir), v)}
}

// self is the running program's path, symlinks resolved ("" if unknown).
func self() string {
	exe, _ := os.Executable()
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return strings.TrimSuffix(exe, " (deleted)")
}

// launch is the launcher of candidates init registers, answering for a program missing or unable to run (docs/install.md).
func launch(c *client.Client, event string, candidates []string, args string, in install, root, shown string) string {
	text := missingText(in, shown)
	var answer, missing string
	switch c.Event(event) {
	case hook.Stop, hook.SubagentStop: // a stop halts if a mapped prompt is in play
		answer = c.Answer(event, hook.Halt(text))
		// sh that succeeds when the transcript mentions a mapped prompt (skill_listing left out) or cannot be read
		const keys = `awk '/^[ \t]*#/ { next } { while (match($0, /prompt[ \t]*=[ \t]*"[^"]*"/)) { k = substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH); sub(/^[^"]*"/, "", k); sub(/"$/, "", k); d = k; gsub("/", "-", d); c = k; gsub("/", ":", c); n = k; sub(/.*:/, "", n); print k ".md"; print d ".md"; print k "/SKILL.md"; print "/" c; print "/" d; print "/" n; print "\"" n "\"" } } /prompt[ \t]*=[ \t]*\047/ { print "/" }' `
		dir, _ := varBin(c.ProjectVar, root, ".")
		missing = `t=$(sed -n 's/.*"transcript_\{0,1\}[pP]ath" *: *"\([^"]*\)".*/\1/p' | head -n 1); k=$(` + keys + dir + "/" + project.ConfigName + ` 2>/dev/null); [ -n "$k" ] && { [ ! -r "$t" ] || grep -v '"skill_listing"' "$t" | grep -qF "$k"; }`
	case hook.PreToolUse, hook.PreSkillShellCommand: // the guard refuses protected names
		answer = c.Answer(event, hook.Deny(c.Event(event), text))
		// sh that succeeds when the hook input names what the launcher's guard refuses
		names := []string{project.ConfigName, guard.NpmScope}
		names = append(names, guard.ClientFiles()...)
		if line := ignoreLine(root); line != "" {
			names = append(names, strings.Trim(line, "/"))
		}
		if rel, ok := project.Rel(root, in.path); ok && rel != "." && in.path != "" {
			// Not testhook's: gate init --no-testhook registers nothing of it.
			names = append(names, filepath.ToSlash(filepath.Join(rel, hook.Detect)), filepath.ToSlash(filepath.Join(rel, hook.Gate)))
		}
		// One -e a name, not a line each: Claude Code's debug log quotes a command with a newline whole.
		missing = "grep -qF"
		for _, name := range names {
			missing += " -e " + cli.ShellQuote(name)
		}
	case hook.PostToolUse, hook.UserPromptSubmit, hook.UserPromptExpansion:
		// Arming, on every tool call: exec saves the shell's fork. Nothing to answer if the program cannot start, and
		// what it leaves unarmed the stop reconciles from the client's record (docs/fail-closed.md).
		return settings.Exec(candidates, args)
	}
	if before, after, found := strings.Cut(answer, platform); found {
		missing += " || exit 0; printf '%s%s%s\\n' " + cli.ShellQuote(before) + ` "$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m | sed 's/x86_64/x64/; s/aarch64/arm64/')" ` + cli.ShellQuote(after)
	} else if missing != "" {
		missing += " || exit 0; printf '%s\\n' " + cli.ShellQuote(answer)
	}
	return settings.Launcher(candidates, args, answer, missing)
}

func missingText(in install, shown string) string {
	return fmt.Sprintf("stopgate is not installed on this machine: %s is missing or cannot run, so nothing this session did was checked. Install it with: %s (then run the session again)",
		shown, in.command)
}

// finding is one line of `gate check`: where (file[:line[:column]]), what, how to fix it.
type finding = client.Finding

// shownFinding spells out control characters (cli.Visible): the text comes from files the agent writes.
func shownFinding(f finding) string {
	s := cli.Visible(f.Loc, true) + ": "
	if f.Warning {
		s += "warning: "
	}
	s += cli.Visible(f.Msg, true)
	if f.Hint != "" {
		s += "\n    hint: " + cli.Visible(f.Hint, true)
	}
	return s
}

// warn and fail are a finding: a warning, or an error gate check exits 1 on.
func warn(loc, msg, hint string) []finding {
	return []finding{{Loc: loc, Warning: true, Msg: msg, Hint: hint}}
}
func fail(loc, msg, hint string) []finding { return []finding{{Loc: loc, Msg: msg, Hint: hint}} }

// runCheck is `gate check`: the config, its files, the hook registrations; exit 1 on an error.
func runCheck(env *cli.Env, args []string) error {
	fl := flags("check")
	plugin := fl.String("plugin", "", "check the hooks of the plugin in `DIR` instead of .claude/settings.json")
	clientName := clientFlag(fl, "check the hooks of the agent `CLIENT` only")
	ws, _, err := parseVerb(env, fl, args, 0)
	if err != nil {
		return err
	}
	cfg, problems, err := config.Inspect(ws.file, ws.root, config.Project)
	var fs []finding
	if errors.Is(err, os.ErrNotExist) {
		fs = fail(ws.rel(ws.file), "does not exist", `"gate init" writes a starter`)
	} else if err != nil {
		return err
	}
	for _, p := range problems {
		loc, msg := p.File, p.Msg
		if p.Line > 0 {
			loc += fmt.Sprintf(":%d", p.Line)
		}
		if p.Key != "" {
			msg = p.Key + ": " + msg
		}
		fs = append(fs, finding{Loc: loc, Warning: p.Warning, Msg: msg, Hint: p.Hint})
	}
	clients, err := checkedClients(ws.root, *clientName)
	if err != nil {
		return usageError("check", err)
	}
	hooks, summary := hookCheck(env, ws, cfg, *plugin, *clientName, clients)
	tel, telFindings := telemetryCheck(env, ws, cfg)
	fs = slices.Concat(fs, hooks, goToolFindings(ws), telFindings)
	errs := 0
	for _, f := range fs {
		fmt.Fprintln(env.Stdout, shownFinding(f))
		if !f.Warning {
			errs++
		}
	}
	for _, c := range clients {
		for _, l := range c.Limits {
			fmt.Fprintf(env.Stdout, "note: %s: %s\n", c.Name, l)
		}
		fmt.Fprintf(env.Stdout, "note: %s: wall: %s\n", c.Name, c.WallLeft)
	}
	if tel != "" {
		fmt.Fprintln(env.Stdout, tel)
	}
	if errs == 0 {
		names := each(clients, func(c *client.Client) string { return c.Name })
		if summary != "" {
			names = append([]string{client.Claude.Name}, names...)
		}
		reuse.Lines(env.Stdout, cfg, env.Getenv("HOME"), names)
	}
	if len(fs) == 0 {
		fmt.Fprintf(env.Stdout, "ok: %s, %s; every stopgate hook registered%s\n", cli.Plural(len(cfg.Mappings), "mapping", "mappings"),
			cli.Plural(len(cfg.Validators), "validator", "validators"), strings.TrimSuffix("; "+summary, "; "))
		return nil
	}
	fmt.Fprintf(env.Stdout, "%s, %s\n", cli.Plural(errs, "error", "errors"), cli.Plural(len(fs)-errs, "warning", "warnings"))
	if errs > 0 {
		return cli.Exit(1)
	}
	return nil
}

// hookCheck returns the registrations' findings and Claude Code's wall summary ("": unchecked).
func hookCheck(env *cli.Env, ws workspace, cfg *config.Config, plugin, clientName string, clients []*client.Client) ([]finding, string) {
	claude, home := settingsFiles(env, ws.root), env.Getenv("HOME")
	regs := claude.registrations(ws.root, home)
	set := wallOf(trust.Project{Root: ws.root, Home: home, File: ws.file, Config: cfg, Regs: regs})
	c := client.Named(clientName)
	runsClaude := c != nil && c.HookFile == "" && slices.Contains(c.Runs, client.Claude) // VS Code
	if plugin == "" && (clientName == "" || c == client.Claude) {
		plugin = installedPlugin(home, claude.texts, regs) // the marketplace's plugin registers them
	}
	// With no --client, Claude Code is checked when registered, or when no client is.
	var fs []finding
	summary := ""
	if c == client.Claude || clientName == "" && (plugin != "" || len(clients) == 0 || claudeRegistered(regs)) || runsClaude {
		var wall []finding
		wall, summary = wallFindings(env, ws, cfg, claude, set)
		fs = append(claudeHookFindings(env, ws, cfg, plugin, claude), wall...)
	}
	for _, c := range clients {
		fs = append(fs, clientFindings(env, ws, cfg, c, set)...)
	}
	var outside []finding // a hook program outside the wall: the agent could replace it unseen
	for _, r := range regs {
		if set.Empty() || r.Path != "" && set.CheckPath(r.Path, ws.root) != nil {
			continue
		}
		what := "a program the tamper guard cannot locate (a bare name or a variable the client does not set)"
		if r.Path != "" {
			what = r.Path + ", outside the protected set"
		}
		outside = append(outside, fail(r.File, fmt.Sprintf("`%s` runs %s: the agent could replace it unseen", cli.Clip(r.Command, 80, "…"), what),
			"register the hooks by an absolute path or one under the project: gate init --bin DIR")...)
	}
	return append(fs, dedupe(outside)...), summary
}

// claudeHookFindings checks Claude Code's registration in its settings, or in the plugin in dir plugin, then the switches.
func claudeHookFindings(env *cli.Env, ws workspace, cfg *config.Config, plugin string, claude *claudeSettings) []finding {
	files, base, initCmd := claude.sharedFirst(), ws.root, `"gate init"` // base: where programs are shown from
	if plugin != "" {
		base = absFrom(env.Dir, plugin)
		file := filepath.Join(base, pluginHooks)
		files = readSettings([]guard.SettingsFile{{Path: file, Name: project.Display(env.Dir, file)}})
		initCmd = `"gate init --plugin ` + cli.ShellQuote(plugin) + `"`
	}
	out := hookFindings(env, ws, cfg, client.Claude, files, expected(), base, initCmd)
	// settings keys that switch the hooks off or choose what they run (trust.HookEnv)
	for _, src := range claude.sharedFirst() {
		if src.err != nil {
			continue // hookFindings reports it
		}
		if src.doc.DisablesHooks() {
			out = append(out, fail(src.Name, "disableAllHooks is true", "no hook runs, stopgate's included: remove it")...)
		}
		out = append(out, envFindings(src.Name, src.doc.Env())...)
	}
	return out
}

// clientFindings checks another client's registration (its hook file or its plugin), env and wall.
func clientFindings(env *cli.Env, ws workspace, cfg *config.Config, c *client.Client, set *guard.Set) []finding {
	path := filepath.Join(ws.root, filepath.FromSlash(c.HookFile))
	switch {
	case c.HookFile == "":
		return nil // no registration of its own: its notes say which it runs
	case !c.IsPlugin():
		files := readSettings([]guard.SettingsFile{{Path: path, Name: c.HookFile}})
		hooks := hookFindings(env, ws, cfg, c, files, hooksOf(c, binInstall(ws.root, "bin"), ws.root, true), ws.root, `"gate init --client `+c.Name+`"`)
		var capped []finding // the client's own block cap ends the loop before max_blocks
		if cfg != nil && c.BlockCap > 0 && cfg.Settings.MaxBlocks >= c.BlockCap {
			capped = warn(ws.rel(ws.file), fmt.Sprintf("settings.max_blocks is %d, but %s lets the agent stop after %d consecutive blocks: the loop would end there, unchecked, instead of halting",
				cfg.Settings.MaxBlocks, c.Title, c.BlockCap), fmt.Sprintf("set max_blocks below %d", c.BlockCap))
		}
		return dedupe(slices.Concat(capped, hooks, clientEnvFindings(ws, env.Getenv("HOME"), c), clientWallFindings(env, ws, c, set)))
	}
	var out []finding
	switch data, err := os.ReadFile(path); {
	case errors.Is(err, fs.ErrNotExist):
		out = fail(c.HookFile, "does not exist: stopgate is not registered for "+c.Title, `"gate init --client `+c.Name+`" writes the plugin`)
	case err != nil:
		out = fail(c.HookFile, err.Error(), "")
	case string(data) != pluginText(c, "bin", binInstall(ws.root, "bin")) && !strings.Contains(string(data), "export const Stopgate"):
		out = warn(c.HookFile, "is not stopgate's plugin", "remove it and run gate init --client "+c.Name)
	}
	return append(out, clientWallFindings(env, ws, c, set)...)
}

// hookFindings checks c's registration of want in files (init writes the first): hooks, programs (shown from base), timeouts.
func hookFindings(env *cli.Env, ws workspace, cfg *config.Config, c *client.Client, files []settingsText, want []settings.Hook, base, initCmd string) []finding {
	vars := map[string]string{"CLAUDE_PLUGIN_ROOT": base} // the variables the clients set
	for _, c := range client.All {
		vars[c.ProjectVar] = ws.root
	}
	var out []finding
	registered := make([]bool, len(want))
	uncovered := make([]string, len(want)) // tools a partial registration lacks
	unreadable, there := false, false
	for _, src := range files {
		if errors.Is(src.err, fs.ErrNotExist) {
			continue
		}
		there = true // a file that cannot be read is there: what it registers is unknown
		found, err := c.Lookup(src.data, want)
		if src.err != nil || err != nil { // not read: the read's error
			unreadable = true
			f := errorFinding(src.Name, cmp.Or(src.err, err))
			if src.err == nil { // not the client's to read either
				f.Hint = c.Title + " cannot read this file either: fix it by hand"
			}
			out = append(out, f)
			continue
		}
		for i, fd := range found {
			if !fd.Registered {
				if c == client.Claude && fd.Uncovered != "" && fd.Uncovered != fd.Matcher {
					uncovered[i] = fd.Uncovered
				}
				continue
			}
			registered[i] = true
			fd.Timeout /= c.Unit() // in seconds
			loc := src.Name
			if c == client.Claude {
				loc = fmt.Sprintf("%s:%d", src.Name, fd.Line)
			}
			out = slices.Concat(out, programFinding(env, fd.Command, loc, base, vars), launcherFindings(c, fd, loc, initCmd), timeoutFinding(cfg, fd, loc, c.Name))
		}
	}
	primary := files[0].Name
	if !there {
		msg := "does not exist: no stopgate hook is registered"
		if c != client.Claude {
			msg += " for " + c.Title
		}
		return append(out, fail(primary, msg, initCmd+" registers them")...)
	}
	for i, h := range want {
		if registered[i] || unreadable { // behind a file that cannot be read, "not registered" would be a guess
			continue
		}
		f := finding{Loc: primary, Msg: h.String() + " is not registered", Hint: initCmd + " registers every stopgate hook and keeps the rest of the file"}
		if uncovered[i] != "" {
			f.Msg = h.String() + " is registered without " + uncovered[i]
		}
		if settings.Program(h.Command) == hook.Testhook { // gate init --no-testhook
			f.Warning = true
			f.Msg += ": the test runner's words and its --auto mode are off (as gate init --no-testhook leaves them)"
		}
		out = append(out, f)
	}
	return sortByLocation(dedupe(out))
}

// sortByLocation orders findings by file (first seen), then by line.
func sortByLocation(fs []finding) []finding {
	splitLoc := func(loc string) (file string, line int) {
		file, rest, _ := strings.Cut(loc, ":")
		line, _ = strconv.Atoi(strings.SplitN(rest, ":", 2)[0])
		return file, line
	}
	rank := map[string]int{}
	for _, f := range fs {
		file, _ := splitLoc(f.Loc)
		if _, ok := rank[file]; !ok {
			rank[file] = len(rank)
		}
	}
	slices.SortStableFunc(fs, func(a, b finding) int {
		fa, la := splitLoc(a.Loc)
		fb, lb := splitLoc(b.Loc)
		return cmp.Or(cmp.Compare(rank[fa], rank[fb]), cmp.Compare(la, lb))
	})
	return fs
}

// programFinding warns when a hook's program is not where its command says; it names the last candidate (the plugin's own).
func programFinding(env *cli.Env, command, loc, base string, vars map[string]string) []finding {
	var last string
	for _, p := range settings.Paths(command) {
		path := os.Expand(p, func(v string) string {
			if s, ok := vars[v]; ok {
				return s
			}
			return env.Getenv(v)
		})
		if !filepath.IsAbs(path) {
			return nil // on $PATH, or relative to where the client runs: not ours to judge
		}
		last = path
		matches, _ := filepath.Glob(path)
		if slices.ContainsFunc(matches, executable) {
			return nil
		}
	}
	in := binInstall(base, filepath.Dir(last))
	if strings.Contains(last, "*") { // npm's platform package, as the shell finds it
		in = npmProject("")
	}
	msg := fmt.Sprintf("hook program %s is missing or not executable", project.Display(base, last))
	if _, ok := settings.Candidates(command); ok {
		msg += ": until it is installed, its launcher answers for it (a stop halts, a guarded tool call is refused)"
	}
	return warn(loc, msg, "install it ("+in.method+"): "+in.command)
}

// launcherFindings warn of what gate init now registers safer: an older launcher, which let a stop pass when the program could not run, and a Claude Code guard hook without onFailure "block".
func launcherFindings(c *client.Client, fd settings.Found, loc, initCmd string) (out []finding) {
	undo := strings.Replace(initCmd, "gate init", "gate uninstall", 1)
	if settings.Earlier(fd.Command) {
		earlier := undo
		if strings.Contains(initCmd, "--plugin") {
			earlier = "deleting the plugin's hooks/hooks.json"
		}
		out = warn(loc, "registered by an earlier gate init, whose launcher lets a stop pass when the hook program is there but cannot run (built for another platform, a noexec mount)",
			"re-register: "+earlier+", then "+initCmd+" (with the options it was given)")
	}
	if c == client.Claude && settings.Program(fd.Command) == hook.Detect && guards(fd.Event) && fd.OnFailure != "block" {
		out = append(out, warn(loc, fd.Hook.String()+` has no "onFailure": "block": if the guard cannot start or times out, the call it guards goes ahead`,
			`add "onFailure": "block" to it, or re-register: `+undo+", then "+initCmd)...)
	}
	return out
}

// timeoutFinding fails a gate hook told a longer timeout than the client enforces, or one a validator outlasts (stop.DeadlineFrom).
func timeoutFinding(cfg *config.Config, fd settings.Found, loc, client string) []finding {
	if settings.Program(fd.Command) != hook.Gate || fd.Event == hook.ConfigChange {
		return nil // ConfigChange runs no validator
	}
	var flag time.Duration
	if m := timeoutFlag.FindStringSubmatch(settings.Args(fd.Command)); m != nil {
		n, _ := strconv.Atoi(m[1])
		flag = time.Duration(n) * time.Second
	}
	told := stop.HookTimeout(client, flag)
	enforced := stop.HookTimeout(client, time.Duration(fd.Timeout)*time.Second)
	if told > enforced {
		how := fmt.Sprintf("tells the gate (--timeout) it has %s", told)
		if flag == 0 {
			how = fmt.Sprintf("gives the gate no --timeout, so it takes the client's default of %s", told)
		}
		return fail(loc, fmt.Sprintf("%s %s, but the client kills it at %s: a stop still being judged then passes unanswered", fd.Hook.String(), how, enforced),
			"give the hook's command --timeout with the hook's timeout in seconds (gate init writes 600 for both)")
	}
	if cfg == nil {
		return nil
	}
	var longest *config.Validator
	for _, name := range cfg.Order {
		if v := cfg.Validators[name]; (v.Run != "" || v.Judge != nil) && (longest == nil || v.Timeout > longest.Timeout) {
			longest = v
		}
	}
	if longest == nil || longest.Timeout <= told-stop.Margin(told) {
		return nil
	}
	return fail(loc, fmt.Sprintf("%s has a timeout of %s, but validator %q may run for %s: the gate answers %s before the hook's timeout, and kills it then (it fails as timed out)",
		fd.Hook.String(), told, longest.Name, longest.Timeout, stop.Margin(told)),
		fmt.Sprintf("raise the hook's timeout and --timeout above %s, or lower the validator's timeout", longest.Timeout+stop.Margin(told)))
}

// dedupe drops repeated findings: a missing program is reported once.
func dedupe(fs []finding) []finding {
	seen := map[string]bool{}
	return slices.DeleteFunc(fs, func(f finding) bool {
		dup := seen[f.Msg]
		seen[f.Msg] = true
		return dup
	})
}

// clientEnvFindings judges the env c's hook files and .env files hand the hooks.
func clientEnvFindings(ws workspace, home string, c *client.Client) []finding {
	top, ok := hooksEnv[c.Name]
	if !ok {
		return nil
	}
	var out []finding
	for _, at := range [][2]string{{c.HookFile, ws.root}, {"~/" + c.HookFile, home}} { // the project's, the user's
		data, err := regular.ReadFile(filepath.Join(at[1], c.HookFile), maxSettings) // not a planted pipe's wait
		if err != nil || at[1] == "" {
			continue
		}
		d := settings.Parse(data)
		names := d.HookEnv()
		if top {
			names = append(names, d.Env()...)
		}
		out = append(out, envFindings(at[0], names)...)
	}
	for _, f := range trust.DotEnvHookEnv(c.Name, ws.root, home) {
		out = append(out, fail(f.Show, f.What()+", which "+c.Title+" loads into its environment and hands every hook and validator: it chooses the programs they run",
			"remove it from the file, and set it in the shell that starts the client")...)
	}
	return out
}

// envFindings are the trusted base's variables (trust.HookEnv) an env at loc sets.
func envFindings(loc string, names []string) []finding {
	env := trust.HookEnv(names)
	if len(env) == 0 {
		return nil
	}
	return fail(loc, "env sets "+strings.Join(env, ", ")+", which every hook and validator runs with: it chooses the programs they run",
		"remove it from env, and set it in the shell that starts the client")
}

// checkedClients are the one --client names, or every client whose file the project has.
func checkedClients(root, name string) ([]*client.Client, error) {
	has := func(c *client.Client) bool {
		return c.HookFile != "" && exists(filepath.Join(root, filepath.FromSlash(c.HookFile)))
	}
	if name != "" {
		c, err := clientNamed(name)
		if err != nil || c == client.Claude {
			return nil, err
		}
		if c.HookFile != "" {
			return []*client.Client{c}, nil
		}
		return append(slices.DeleteFunc(slices.Clone(c.Runs), func(r *client.Client) bool { return r == client.Claude || !has(r) }), c), nil
	}
	out := slices.DeleteFunc(slices.Clone(agentClients), func(c *client.Client) bool { return !has(c) })
	for _, c := range agentClients {
		if c.HookFile == "" && slices.ContainsFunc(c.Runs, func(r *client.Client) bool { return slices.Contains(out, r) }) {
			out = append(out, c)
		}
	}
	return out, nil
}

// goToolFindings warns, where go.mod pins stopgate as a tool, of what makes go tool build another.
func goToolFindings(ws workspace) []finding {
	data := goTool(ws.root)
	if data == nil {
		return nil
	}
	var locs []string
	if at := replaceLine.FindIndex(data); at != nil {
		locs = append(locs, "go.mod:"+strconv.Itoa(bytes.Count(data[:at[0]], []byte("\n"))+1))
	}
	for _, name := range []string{"go.work", "vendor/modules.txt"} {
		if exists(filepath.Join(ws.root, name)) {
			locs = append(locs, name)
		}
	}
	return mapped(locs, func(loc string) finding {
		// GOWORK=off: in a workspace, go list -m names no version.
		return finding{Loc: loc, Warning: true, Msg: "if this replaces, vendors or puts in a workspace stopgate or a module it uses, the stopgate plugin does not run the go tool it builds, so with no bin/ every stop halts",
			Hint: "install stopgate as published in bin/, which the hooks run first: " + goInstall(`"$PWD"/bin`, "@$(GOWORK=off go list -m -f '{{.Version}}' "+goModule+")")}
	})
}

func claudeRegistered(regs []guard.Registered) bool {
	return slices.ContainsFunc(regs, func(r guard.Registered) bool { return strings.HasPrefix(r.File, ".claude/") })
}

// telemetryCheck is check's line on telemetry, and a warning when its exporter is missing.
func telemetryCheck(env *cli.Env, ws workspace, cfg *config.Config) (string, []finding) {
	if cfg == nil || !cfg.Telemetry.Enabled && cfg.Telemetry.Endpoint == "" {
		return "", nil
	}
	line := "telemetry: " + telemetry.Describe(cfg.Telemetry, env.Getenv)
	if _, err := telemetry.ExporterPath(); err != nil && telemetry.Enabled(cfg.Telemetry, env.Getenv) {
		return line, warn(ws.rel(ws.file), "telemetry is on, but "+err.Error(), "stops are judged and logged as ever; nothing is exported until it is installed")
	}
	return line, nil
}

// configChangeInput returns data's ConfigChange; ok with an error (one that cannot be read) is refused, never judged as a stop.
func configChangeInput(data []byte) (in *hook.Input, ok bool, err error) {
	var ev struct {
		Event string `json:"hook_event_name"`
	}
	if !bytes.Contains(data, []byte(`"ConfigChange"`)) || json.Unmarshal(data, &ev) == nil && ev.Event != hook.ConfigChange {
		return nil, false, nil // another event, maybe mentioning it: the stop reads it
	}
	in, err = hook.Parse(data, hook.ConfigChange)
	return in, true, err
}

// configChange blocks a settings change that weakens a hook, a switch or the wall (docs/security.md, ConfigChange).
func configChange(env *cli.Env, in *hook.Input) error {
	if in.Source == "skills" || in.Source == "policy_settings" {
		return nil
	}
	root, home := project.Root(env.Getenv, in.Cwd, env.Dir), env.Getenv("HOME")
	ws := workspace{root: root, file: config.Path(root, "", env.Dir)}
	claude := settingsFiles(env, root)
	cfg, _, err := config.Inspect(ws.file, ws.root, config.FileOnly)
	if errors.Is(err, fs.ErrNotExist) && !stopgateProject(env, root, ws.file, claude) {
		return nil
	}
	// A plugin's hooks are registered in CLAUDE_PLUGIN_ROOT, not the settings.
	why := errorsOf(claudeHookFindings(env, ws, cfg, env.Getenv("CLAUDE_PLUGIN_ROOT"), claude), false)
	if set := wallOf(trust.Project{Root: root, Home: home, File: ws.file, Config: cfg, Regs: claude.registrations(root, home)}); !set.Empty() {
		rules := denyRules(set, root, home)
		w, bad := readWalls(claude.texts)
		switch {
		case bad != nil:
			why = append(why, bad.Loc+": "+bad.Msg)
		case !w.Present(rules) && exists(filepath.Join(ws.stateDir(), noWallMark)): // no wall to weaken
		default:
			why = append(why, errorsOf(wallDown(claude, w, rules), true)...)
		}
	}
	if len(why) == 0 {
		return nil
	}
	return hook.AnswerTo(env.Stdout, in).Write(hook.Block("stopgate refused this change to " + cmp.Or(in.ChangedFile, in.Source) +
		": it removes or weakens stopgate's hooks or its wall, so this session keeps the settings it had. " +
		strings.Join(why, "; ") + ". If the change is wanted, the user makes it and starts a new session (gate check says what is missing)."))
}

// errorsOf are fs as "loc: msg", the warnings too when warnings.
func errorsOf(fs []finding, warnings bool) []string {
	return each(fs, func(f finding) string {
		if f.Warning && !warnings {
			return ""
		}
		return f.Loc + ": " + f.Msg
	})
}

// stopgateProject reports whether root shows stopgate: config, state dir, plugin or a registration.
func stopgateProject(env *cli.Env, root, file string, claude *claudeSettings) bool {
	for _, p := range []string{file, filepath.Join(root, config.DefaultStateDir)} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	if env.Getenv("CLAUDE_PLUGIN_ROOT") != "" {
		return true
	}
	for _, src := range claude.texts {
		if errors.Is(src.err, fs.ErrNotExist) {
			continue
		}
		if src.err != nil {
			return true
		}
		found, err := src.doc.Lookup(expected())
		if err != nil && bytes.Contains(src.data, []byte(hook.Gate)) || slices.ContainsFunc(found, func(f settings.Found) bool { return f.Registered }) {
			return true
		}
	}
	return false
}

// claudeSettings are Claude Code's settings files in its order (guard.ClaudeSettings), read once; init writes texts[at].
type claudeSettings struct {
	texts []settingsText
	at    int
}

// settingsFiles reads the user's and the project's Claude Code settings.
func settingsFiles(env *cli.Env, root string) *claudeSettings {
	files := guard.ClaudeSettings(root, env.Getenv("HOME"))
	return &claudeSettings{readSettings(files), slices.IndexFunc(files, func(s guard.SettingsFile) bool { return s.Name == settingsFile })}
}

func (c *claudeSettings) shared() guard.SettingsFile { return c.texts[c.at].SettingsFile }

// sharedFirst are the texts, the shared ones first.
func (c *claudeSettings) sharedFirst() []settingsText {
	return append([]settingsText{c.texts[c.at]}, slices.Delete(slices.Clone(c.texts), c.at, c.at+1)...)
}

// registrations are the stopgate programs the hook files register, these settings as read here.
func (c *claudeSettings) registrations(root, home string) []guard.Registered {
	read := map[string][]byte{}
	for _, s := range c.texts {
		read[s.Path] = s.data // nil for one that could not be read: it registers none
	}
	return guard.Registrations(root, home, read)
}

// settingsText is a settings file read and parsed once.
type settingsText struct {
	guard.SettingsFile
	data []byte        // nil when it could not be read
	err  error         // reading it (fs.ErrNotExist: it is not there)
	doc  *settings.Doc // nil when it could not be read
}

// readSettings reads through regular.ReadFile: a planted named pipe cannot hold the hook.
func readSettings(files []guard.SettingsFile) []settingsText {
	return mapped(files, func(f guard.SettingsFile) settingsText {
		t := settingsText{SettingsFile: f}
		if t.data, t.err = regular.ReadFile(f.Path, maxSettings); t.err == nil {
			t.doc = settings.Parse(t.data)
		}
		return t
	})
}

// wallOf is the trusted base's wall (trust.For), whence the OS wall's rules and every client's wall (docs/security.md).
func wallOf(p trust.Project) *guard.Set {
	base, _ := trust.For(p)
	return base.Wall()
}

// projectSet is the wall of the project at root, with hook programs about to be registered.
func projectSet(env *cli.Env, root string, bins []string, registered ...string) *guard.Set {
	file := filepath.Join(root, project.ConfigName)
	cfg, _, _ := config.Inspect(file, root, config.FileOnly)
	return wallOf(trust.Project{Root: root, Home: env.Getenv("HOME"), File: file, Config: cfg, Bins: bins, Registered: registered})
}

// denyRules returns the Edit deny rules for set (a folder's covers its contents).
func denyRules(set *guard.Set, root, home string) []string {
	if home != "" {
		home = filepath.Clean(home) // $HOME as set, maybe with a trailing slash
	}
	var out []string
	for _, p := range set.Paths() {
		paths := []string{p.Path}
		if strings.ContainsAny(p.Path, "*?[") { // its matches: Claude Code's sandbox applies no glob's deny rule to Bash (2.1.332)
			paths, _ = filepath.Glob(filepath.FromSlash(p.Path)) // a bad pattern matches nothing
		}
		for _, path := range paths {
			st, err := os.Stat(path)
			dir := (err == nil && st.IsDir()) || p.Dir
			out = append(out, settings.DenyRule(filepath.ToSlash(root), filepath.ToSlash(home), filepath.ToSlash(path), dir))
		}
	}
	return out
}

// writeWall merges the OS wall alone into the project's settings.
func writeWall(env *cli.Env, root string, bins []string) error {
	files, wall := settingsFiles(env, root), wallFor(env, root, bins, nil)
	if err := edit(files.shared(), nil, wall.merge); err != nil {
		return err
	}
	wall.say(env, files)
	return nil
}

// wallMerge is the OS wall merged into the project's settings.
type wallMerge struct {
	off   bool // [settings] protect = []: nothing to wall in
	rules []string
	added []string // the settings it added
	st    settings.Walls
}

// wallFor is the OS wall of the project at root, with hook programs about to be registered, to merge.
func wallFor(env *cli.Env, root string, bins, registered []string) *wallMerge {
	set := projectSet(env, root, bins, registered...)
	return &wallMerge{off: set.Empty(), rules: denyRules(set, root, env.Getenv("HOME"))}
}

// merge merges the sandbox settings and the deny rules into data, the project's settings.
func (w *wallMerge) merge(data []byte) (out []byte, err error) {
	if w.off {
		return data, nil
	}
	if out, w.added, w.st, err = settings.MergeWall(data, w.rules); err != nil {
		return nil, settingsError(settingsFile, err)
	}
	return out, nil
}

// say tells what the wall added, what settings keep against it, and what the machine lacks.
func (w wallMerge) say(env *cli.Env, files *claudeSettings) {
	switch {
	case w.off:
		fmt.Fprintf(env.Stdout, "%s: no OS wall: [settings] protect = [] protects nothing\n", settingsFile)
		return
	case len(w.added) == 0:
		fmt.Fprintf(env.Stdout, "%s: the OS wall is already there (sandbox, %s)\n", settingsFile, cli.Plural(len(w.rules), "deny rule", "deny rules"))
	default:
		fmt.Fprintf(env.Stdout, "%s: the OS wall: added %s\n", settingsFile, cli.Plural(len(w.added), "setting", "settings"))
		for _, a := range w.added {
			fmt.Fprintf(env.Stdout, "  + %s\n", a)
		}
	}
	for _, a := range w.st.Against() { // sandbox keys set against the wall
		fmt.Fprintf(env.Stdout, "note: %s: %s; left as it is\n", settingsFile, a.Text)
	}
	for _, f := range files.texts[files.at+1:] { // the local ones, whose keys win
		other, _ := settings.Parse(f.data).Wall() // one that cannot be read sets nothing
		for _, a := range other.Against() {
			fmt.Fprintf(env.Stdout, "note: %s: %s; it overrides %s\n", f.Name, a.Text, settingsFile)
		}
	}
	if missing := missingTools(env); len(missing) > 0 {
		fmt.Fprintf(env.Stdout, "note: the OS sandbox needs %s, not installed here: until it is, the client refuses every Bash command (apt-get install %s)\n",
			strings.Join(missing, " and "), strings.Join(packages(missing), " "))
	}
}

// missingTools returns what the client's sandbox needs and PATH lacks (Linux: bwrap, socat).
func missingTools(env *cli.Env) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	return each([]string{"bwrap", "socat"}, func(t string) string {
		if slices.ContainsFunc(filepath.SplitList(env.Getenv("PATH")), func(dir string) bool { return executable(filepath.Join(dir, t)) }) {
			return ""
		}
		return t
	})
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func packages(tools []string) []string {
	return each(tools, func(t string) string { return cmp.Or(map[string]string{"bwrap": "bubblewrap"}[t], t) })
}

// wallFindings says whether the OS wall of set is up and why not; summary says it in a few words.
func wallFindings(env *cli.Env, ws workspace, cfg *config.Config, claude *claudeSettings, set *guard.Set) (out []finding, summary string) {
	confined, out := confineFindings(ws, cfg)
	summary = "the OS wall is up" + confined
	if set.Empty() {
		summary = "nothing protected (protect = [])" + confined
	}
	w, bad := readWalls(claude.texts)
	if bad != nil {
		return append(out, *bad), summary
	}
	if w.Read == 0 || set.Empty() {
		return out, summary // no settings: hookFindings says so; protect = []: nothing to wall in
	}
	out = append(out, wallDown(claude, w, denyRules(set, ws.root, env.Getenv("HOME")))...)
	if m := missingTools(env); w.Value("enabled") && len(m) > 0 {
		out = append(out, warn(settingsFile, "the OS sandbox needs "+strings.Join(m, " and ")+", not installed here: the client refuses every Bash command until it is",
			"apt-get install "+strings.Join(packages(m), " ")+" (as root; scripts/install-sandbox-tools does it)")...)
	}
	return out, summary
}

// readWalls reads the wall from the files; one of valid JSON shaped wrong is a finding.
func readWalls(files []settingsText) (settings.Walls, *finding) {
	docs := mapped(files, func(f settingsText) *settings.Doc { return f.doc })
	w, bad, err := settings.ReadWalls(docs)
	if err == nil || !docs[bad].JSON() {
		return w, nil
	}
	f := errorFinding(files[bad].Name, err) // valid JSON: a *settings.Error
	f.Warning, f.Msg, f.Hint = true, f.Msg+": the OS wall is down", "fix it by hand, then run gate init again"
	return w, &f
}

// errorFinding is err reading the file name, at its line and column when it has them.
func errorFinding(name string, err error) finding {
	if se, ok := errors.AsType[*settings.Error](err); ok {
		return finding{Loc: fmt.Sprintf("%s:%d:%d", name, se.Line, se.Column), Msg: se.Msg}
	}
	return finding{Loc: name, Msg: err.Error()}
}

// wallDown reports what takes the wall down: keys against it or unset, rules missing, exclusions.
func wallDown(files *claudeSettings, w settings.Walls, rules []string) []finding {
	var out []finding
	for _, a := range w.Against() {
		out = append(out, warn(fmt.Sprintf("%s:%d", files.texts[a.File].Name, a.Line), a.Text+": the OS wall is down",
			"set it as gate init writes it, or keep it knowing the guard alone stands")...)
	}
	if unset := w.Unset(); len(unset) > 0 {
		out = append(out, warn(settingsFile, "the OS wall is down: "+strings.Join(unset, ", ")+" not set, so the agent's Bash can write the protected set in ways the guard cannot see",
			`"gate init" writes the sandbox settings and keeps the rest of the file`)...)
	}
	if missing := w.Lacking(rules); len(missing) > 0 {
		out = append(out, warn(settingsFile, "permissions.deny lacks "+strings.Join(missing, ", ")+": the sandbox and the Write/Edit tools let the agent change it",
			`"gate init" adds the deny rules of the protected set (run it again after adding a run validator)`)...)
	}
	if len(w.Excluded) > 0 {
		out = append(out, warn(settingsFile, "sandbox.excludedCommands run outside the OS sandbox: "+strings.Join(w.Excluded, ", "),
			"keep it empty: an excluded command can write the protected set")...)
	}
	return out
}

// clientWallFindings says whether the client's own wall over set is up.
func clientWallFindings(env *cli.Env, ws workspace, c *client.Client, set *guard.Set) []finding {
	if c.Wall == nil || set.Empty() {
		return nil
	}
	return c.Wall.Check(env.Getenv, ws.root, wallPaths(set))
}

func wallPaths(set *guard.Set) []client.Path {
	return mapped(set.Paths(), func(p guard.Protected) client.Path { return client.Path{Path: p.Path, Show: p.Show, Dir: p.Dir} })
}

// confineFindings says whether run validators are confined, and when they cannot be (with confine = true, an error).
func confineFindings(ws workspace, cfg *config.Config) (summary string, out []finding) {
	if cfg == nil {
		return "", nil
	}
	if runs, err := cfg.Runs(); err == nil && len(runs) == 0 { // an unreadable one may run
		return "", nil
	}
	if cfg.Settings.Confine == config.ConfineOff {
		return "; run validators unconfined (confine = false)", nil
	}
	_, err := validator.Bwrap()
	switch {
	case err == nil:
	case cfg.Settings.Confine == config.ConfineOn:
		out = fail(ws.rel(ws.file), "settings.confine: run validators cannot be confined: "+err.Error()+"; every stop that runs one halts",
			"install bubblewrap (scripts/install-sandbox-tools), or set confine = false")
	default:
		out = warn(ws.rel(ws.file), "run validators are not confined: "+err.Error()+"; code they run (the agent's tests) can rewrite the protected set",
			"install bubblewrap (scripts/install-sandbox-tools), or set confine = false to say they run unconfined")
	}
	return "; run validators confined", out
}
