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
	"slices"
	"strconv"
	"strings"

	"github.com/stopgate/stopgate/internal/buildinfo"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/settings"
)

var settingsFile = client.Claude.HookFile

// runInit is `gate init`: a client's hooks (Claude Code's with the OS wall), the starter and .gitignore; or a plugin.
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
		if dir := pluginRegisters(env, root); *wallOnly || dir != "" {
			return initWallOnly(env, root, dir)
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

// noWallMark says gate init --no-wall was chosen: only then may ConfigChange let the wall go.
const noWallMark = "no-wall"

// chooseWall records whether the project at root has the wall.
func chooseWall(root string, wall bool) error {
	dir := workspace{root: root, file: config.Path(root, "", root)}.stateDir()
	mark := filepath.Join(dir, noWallMark)
	if wall {
		if err := os.Remove(mark); !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(mark, []byte("gate init --no-wall: this project has no OS wall; gate init without it puts the wall up\n"), 0o644)
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
		fmt.Fprintf(env.Stdout, "  + %s  (%s, timeout %d%s)\n", h, settings.Shown(h.Command), h.Timeout, map[int]string{1: "s", 1000: "ms"}[c.Unit])
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
	var missing []string
	for _, p := range programs(want, binDir) {
		if !executable(p) {
			missing = append(missing, filepath.Base(p))
		}
	}
	if len(missing) == 0 {
		return
	}
	fmt.Fprintf(env.Stdout, "note: %s not in %s yet: until they are, a stop halts and says to run: %s\n",
		strings.Join(missing, ", "), project.Display(prefixRoot, binDir), in.command)
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

// initPlugin writes a Claude Code plugin in dir: its manifest (once) and hooks/hooks.json.
func initPlugin(env *cli.Env, dir string) error {
	manifest := filepath.Join(dir, pluginManifestFile)
	if err := writeOnce(env, manifest, shown(env.Dir, manifest), pluginManifest(), "wrote the plugin manifest", "exists, left as it is"); err != nil {
		return err
	}
	hooksFile := filepath.Join(dir, pluginHooks)
	want := pluginWanted(dir)
	if err := register(env, client.Claude, guard.SettingsFile{Path: hooksFile, Name: shown(env.Dir, hooksFile)}, want, pluginHooksNew, nil); err != nil {
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
	fmt.Fprintf(env.Stdout, "load it with: claude --plugin-dir %s\n", cli.ShellQuote(shown(env.Dir, dir)))
	return nil
}

var (
	pluginManifestFile = filepath.Join(".claude-plugin", "plugin.json")
	pluginHooks        = filepath.Join("hooks", "hooks.json")
)

// pluginHooksNew is a new hooks.json: a description the client shows.
var pluginHooksNew = []byte("{\n  \"description\": \"stopgate: detect arms validators when a mapped prompt is read; gate runs them when the agent stops\"\n}\n")

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

// agentClients are the clients other than Claude Code.
var agentClients = client.All[1:]

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

// clientArgs are the arguments c's hook h gives its program.
func clientArgs(c *client.Client, h client.Hook) string {
	args := ""
	if h.Program == hook.Gate {
		args = " --timeout " + strconv.Itoa(h.Timeout) // to answer before the client kills it
	}
	if c != client.Claude {
		args += " --client " + c.Name
	}
	if c.EventFlag {
		args += " --event " + h.Event
	}
	return strings.TrimSpace(args)
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
	case c.IsPlugin():
		err = writePlugin(env, c, root, bin, in)
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
	if c != client.Claude {
		if err := initClientWall(env, c, root); err != nil {
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
		cmd := launch(c, r.Event, candidates(bin, r.Program), clientArgs(c, r), in, root, in.shown(root, r.Program))
		h := settings.Hook{Event: r.Event, Matcher: r.Matcher, Command: cmd, Timeout: r.Timeout * c.Unit}
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

func guards(event string) bool {
	return event == hook.PreToolUse || event == hook.PreSkillShellCommand
}

// expected is every hook gate init registers, to look up (settings.Lookup).
func expected() []settings.Hook { return hooksOf(client.Claude, install{dir: projectBin}, "", true) }

const (
	projectBin = `"$CLAUDE_PROJECT_DIR"/bin`
	pluginBin  = `"${CLAUDE_PLUGIN_ROOT}"/bin`
)

// candidates are the paths the launcher of prog under bin tries, in order: the plugin's try the project's
// npm and bin/ programs, then the go.mod tool its script kept, before the script (docs/architecture.md).
func candidates(bin, prog string) []string {
	if bin == pluginBin {
		return []string{`"$CLAUDE_PROJECT_DIR"/` + npmBin + "/" + prog, projectBin + "/" + prog,
			`"${CLAUDE_PLUGIN_ROOT}"/cache"$CLAUDE_PROJECT_DIR"/` + prog, bin + "/" + prog}
	}
	return []string{bin + "/" + prog}
}

const gitignoreFile = ".gitignore"

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

const pluginName = "stopgate"

// installedPlugin is the folder of the marketplace plugin stopgate@MARKETPLACE the settings enable, or "".
func installedPlugin(home string, files []settingsText) string {
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
			if enabled[key] && strings.HasPrefix(key, pluginName+"@") && exists(filepath.Join(in.InstallPath, pluginHooks)) {
				return in.InstallPath
			}
		}
	}
	return ""
}

// pluginRegisters is the installed plugin's folder when the project's settings register no hook.
func pluginRegisters(env *cli.Env, root string) string {
	home, files := env.Getenv("HOME"), settingsFiles(env, root)
	if claudeRegistered(files.registrations(root, home)) {
		return ""
	}
	return installedPlugin(home, files.texts)
}

// initWallOnly is gate init where the plugin registers the hooks: the wall, starter, .gitignore.
func initWallOnly(env *cli.Env, root, plugin string) error {
	if plugin != "" {
		fmt.Fprintf(env.Stdout, "%s: no hooks: stopgate's plugin registers them (%s)\n", settingsFile, plugin)
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

func pluginText(c *client.Client, bin string, in install) string {
	text := c.PluginText(filepath.ToSlash(bin), missingText(in, filepath.ToSlash(filepath.Join(bin, "gate"))))
	return text
}

// writePlugin writes c's plugin unless the file is there; one that differs is never overwritten.
func writePlugin(env *cli.Env, c *client.Client, root, bin string, in install) error {
	path, want := filepath.Join(root, filepath.FromSlash(c.HookFile)), pluginText(c, bin, in)
	if data, err := settings.ReadIfThere(path); err != nil || data != nil && string(data) != want {
		return cmp.Or(err, cli.WithHint(fmt.Errorf("%s: exists and differs from the plugin this gate writes", c.HookFile),
			"the file is left as it was: remove it (or compare it with a fresh one) and run gate init --client "+c.Name+" again"))
	}
	return writeOnce(env, path, c.HookFile, []byte(want),
		"wrote the stopgate plugin (detect on tool.execute.before/after, gate on session.idle)", "the stopgate plugin is already there")
}

func pluginFindings(ws workspace, c *client.Client) []finding {
	data, err := os.ReadFile(filepath.Join(ws.root, filepath.FromSlash(c.HookFile)))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return []finding{{loc: c.HookFile, msg: "does not exist: stopgate is not registered for " + c.Title, hint: `"gate init --client ` + c.Name + `" writes the plugin`}}
	case err != nil:
		return []finding{{loc: c.HookFile, msg: err.Error()}}
	case string(data) != pluginText(c, "bin", binInstall(ws.root, "bin")) && !strings.Contains(string(data), "export const Stopgate"):
		return []finding{{loc: c.HookFile, warning: true, msg: "is not stopgate's plugin", hint: "remove it and run gate init --client " + c.Name}}
	}
	return nil
}

// runUninstall is `gate uninstall`: what init added, where still as init wrote it, every other byte kept.
func runUninstall(env *cli.Env, args []string) error {
	fl := flags("uninstall")
	bin := fl.String("bin", "bin", "the `DIR` given to gate init --bin")
	clientName := clientFlag(fl, "undo gate init --client `CLIENT`")
	plugin := fl.String("plugin", "", "undo gate init --plugin `DIR`: its files there, and the OS wall it added here")
	if err := parseFlags(env, fl, args); err != nil {
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
	// Every file is read and checked before any is written.
	for _, u := range plan {
		if err := u.apply(); err != nil {
			return err
		}
		u.say(env)
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

// pluginUndo plans taking the plugin in dir's hooks out, hooks.json left empty, and the manifest while init's.
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

// say tells what was taken out of the file and what was left, changed since.
func (u undo) say(env *cli.Env) {
	name, r := u.name, u.r
	switch {
	case len(r.Removed) > 0:
		fmt.Fprintf(env.Stdout, "%s: removed %s\n", name, cli.Plural(len(r.Removed), "entry of stopgate's", "entries of stopgate's"))
		for _, s := range r.Removed {
			fmt.Fprintf(env.Stdout, "  - %s\n", s)
		}
	case u.had:
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

// clientUndo plans gate uninstall: c's hooks, older plain paths, the walls, and the plugin in dir plugin.
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
	u, err := undoSame(root, c.HookFile, []byte(pluginText(c, bin, binInstall(root, bin))), "the stopgate plugin", "the plugin")
	if !c.IsPlugin() {
		u, err = undoHooks(c, root, c.HookFile, want, deny)
	}
	plan := []undo{u}
	if err == nil && c.Wall != nil {
		u, err = undoFile(root, c.Wall.File(), func(u *undo, data []byte) (err error) {
			u.out, u.r, u.gone, err = c.Wall.Remove(data, root, wallPaths(projectSet(env, root, nil)))
			return err
		})
		plan = append(plan, u)
	}
	if err == nil && plugin != "" {
		more, perr := pluginUndo(absFrom(env.Dir, plugin))
		plan, err = append(plan, more...), perr
	}
	return plan, err
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
		return u, cli.WithHint(settings.Named(name, err), "nothing was changed: fix the file by hand, then run gate uninstall again")
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
	root, path := u.base, filepath.Join(u.base, filepath.FromSlash(u.name))
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

// install is how stopgate is installed for a project, and how a machine without it gets it.
type install struct {
	method  string // "npm", "go tool", "bin" (a folder of the project), "path" (one outside it)
	dir     string // the bin dir as a shell prefix, e.g. "$CLAUDE_PROJECT_DIR"/bin
	path    string // the directory dir names here
	command string // the one command that installs it here
}

// npmBin is a glob: the settings are shared by machines of every platform.
const npmBin = guard.NpmScope + "/*/bin"

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
	if goTool(root) {
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

// npmPlatforms are dist.Platforms (install_test.go keeps the two equal).
var npmPlatforms = []string{"linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"}

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

const goModule = "github.com/stopgate/stopgate"

// goPinned is the version go.mod pins: a bare go install builds what the agent can write (replace, vendor/, go.work).
const goPinned = "@$(go list -m -f '{{.Version}}' " + goModule + ")"

// goInstall installs the programs into gobin at version, statically as make build does (libc costs +1 ms a call).
func goInstall(gobin, version string) string {
	return "CGO_ENABLED=0 GOBIN=" + gobin + " go install " + goModule + "/cmd/..." + version
}

// npmProject is the project's npm packages, programs in dir ("": only the glob is known).
func npmProject(dir string) install {
	return install{method: "npm", dir: `"$CLAUDE_PROJECT_DIR"/` + npmBin, path: dir, command: "npm install"}
}

// goTool reports whether the Go module at root has stopgate's gate as a tool.
func goTool(root string) bool {
	data, _ := os.ReadFile(filepath.Join(root, "go.mod")) // none: no tool
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) > 0 && f[len(f)-1] == goModule+"/cmd/gate" && (len(f) == 1 || f[0] == "tool") {
			return true
		}
	}
	return false
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
		dir, _ := varBin(c.ProjectVar, root, ".")
		missing = promptInPlay(dir + "/" + project.ConfigName)
	case hook.PreToolUse, hook.PreSkillShellCommand: // the guard refuses protected names
		answer = c.Answer(event, hook.Deny(c.Event(event), text))
		missing = protectedGrep(root, in)
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

// platform stands for the machine's npm platform, put in from uname.
const platform = "@PLATFORM@"

// promptInPlay is sh that succeeds when the transcript mentions a mapped prompt (skill_listing left out) or cannot be read.
func promptInPlay(config string) string {
	const keys = `awk '/^[ \t]*#/ { next } { while (match($0, /prompt[ \t]*=[ \t]*"[^"]*"/)) { k = substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH); sub(/^[^"]*"/, "", k); sub(/"$/, "", k); d = k; gsub("/", "-", d); c = k; gsub("/", ":", c); n = k; sub(/.*:/, "", n); print k ".md"; print d ".md"; print k "/SKILL.md"; print "/" c; print "/" d; print "/" n; print "\"" n "\"" } } /prompt[ \t]*=[ \t]*\047/ { print "/" }' `
	return `t=$(sed -n 's/.*"transcript_\{0,1\}[pP]ath" *: *"\([^"]*\)".*/\1/p' | head -n 1); k=$(` + keys + config + ` 2>/dev/null); [ -n "$k" ] && { [ ! -r "$t" ] || grep -v '"skill_listing"' "$t" | grep -qF "$k"; }`
}

// protectedGrep is sh that succeeds when the hook input names what the launcher's guard refuses.
func protectedGrep(root string, in install) string {
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
	grep := "grep -qF"
	for _, name := range names {
		grep += " -e " + cli.ShellQuote(name)
	}
	return grep
}
