package gate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/trust"
	"github.com/stopgate/stopgate/internal/validator"
)

// configChangeInput returns the input when data is a ConfigChange. ok with
// an error: data names ConfigChange but cannot be read as one; it is
// refused, never passed on as a stop (Claude Code would take the change).
func configChangeInput(data []byte) (in *hook.Input, ok bool, err error) {
	if !bytes.Contains(data, []byte(`"ConfigChange"`)) {
		return nil, false, nil
	}
	in, err = hook.Parse(data, hook.ConfigChange)
	if err == nil {
		return in, true, nil
	}
	var ev struct {
		Event string `json:"hook_event_name"`
	}
	if json.Unmarshal(data, &ev) == nil && ev.Event != hook.ConfigChange {
		return nil, false, nil // another event that mentions it: the stop reads it
	}
	return nil, true, err
}

// unreadableChange refuses an unreadable ConfigChange in a stopgate project, else returns err.
func unreadableChange(env *cli.Env, err error) error {
	root := project.Root(env.Getenv, "", env.Dir)
	if !stopgateProject(env, root, config.Path(root, "", env.Dir), settingsFiles(env, root)) {
		return err
	}
	return hook.AnswerTo(env.Stdout, nil).Write(hook.Block("stopgate refused this settings change: its ConfigChange input could not be read (" +
		err.Error() + "), so whether it weakens stopgate's hooks or its wall cannot be told; this session keeps the settings it had."))
}

// configChange refuses (blocks) a settings change after which stopgate is
// weaker than gate init left it: a hook unregistered, a switch
// (switchFindings), or the wall down (wallDown; only the hooks count in a
// project of gate init --no-wall). Skills, managed policy and projects
// without stopgate pass. See docs/security.md (ConfigChange).
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
	why := errorsOf(hookFindings(env, ws, cfg, env.Getenv("CLAUDE_PLUGIN_ROOT"), claude), false)
	why = append(why, errorsOf(switchFindings(claude), true)...)
	if rules, nothing := wallRules(root, home, ws.file, cfg, claude.registrations(root, home)); !nothing {
		w, bad := readWalls(claude.texts())
		switch {
		case bad != nil:
			why = append(why, bad.loc+": "+bad.msg)
		case !w.Present(rules) && noWallChosen(ws.stateDir()): // no wall to weaken
		default:
			why = append(why, errorsOf(wallDown(claude, w, rules), true)...)
		}
	}
	if len(why) == 0 {
		return nil
	}
	changed := in.ChangedFile
	if changed == "" {
		changed = in.Source
	}
	return hook.AnswerTo(env.Stdout, in).Write(hook.Block("stopgate refused this change to " + changed +
		": it removes or weakens stopgate's hooks or its wall, so this session keeps the settings it had. " +
		strings.Join(why, "; ") + ". If the change is wanted, the user makes it and starts a new session (gate check says what is missing)."))
}

// errorsOf are fs as "loc: msg", the warnings too when warnings.
func errorsOf(fs []finding, warnings bool) []string {
	var out []string
	for _, f := range fs {
		if warnings || !f.warning {
			out = append(out, f.loc+": "+f.msg)
		}
	}
	return out
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
	for _, src := range claude.texts() { // read only now: a marker above answers first
		if errors.Is(src.err, fs.ErrNotExist) {
			continue
		}
		if src.err != nil {
			return true
		}
		found, lerr := src.doc.Lookup(expected())
		if lerr != nil && bytes.Contains(src.data, []byte(hook.Gate)) ||
			slices.ContainsFunc(found, func(f settings.Found) bool { return f.Registered }) {
			return true
		}
	}
	return false
}

// switchFindings are settings keys that switch the hooks off or choose what they run (trust.HookEnv).
func switchFindings(claude *claudeSettings) []finding {
	var out []finding
	for _, src := range claude.sharedFirst() {
		if src.err != nil {
			continue // hookFindings reports it
		}
		if src.doc.DisablesHooks() {
			out = append(out, finding{loc: src.Name, msg: "disableAllHooks is true", hint: "no hook runs, stopgate's included: remove it"})
		}
		out = append(out, envFindings(src.Name, src.doc.Env())...)
	}
	return out
}

// claudeSettings are the settings Claude Code reads hooks from, in its
// order (guard.ClaudeSettings), read on first use (texts); shared, which
// gate init writes, is read[at].
type claudeSettings struct {
	shared guard.SettingsFile
	at     int
	read   []guard.SettingsFile
	list   []settingsText // nil until texts
}

// settingsFiles returns the project's and the user's Claude Code settings.
func settingsFiles(env *cli.Env, root string) *claudeSettings {
	read := guard.ClaudeSettings(root, env.Getenv("HOME"))
	at := slices.IndexFunc(read, func(s guard.SettingsFile) bool { return s.Name == settingsFile })
	return &claudeSettings{shared: read[at], at: at, read: read}
}

// others are the settings beside the shared ones: the user's, the local.
func (f *claudeSettings) others() []guard.SettingsFile {
	return slices.Delete(slices.Clone(f.read), f.at, f.at+1)
}

// over are the settings whose keys win over the shared ones: the local.
func (f *claudeSettings) over() []guard.SettingsFile { return f.read[f.at+1:] }

func (f *claudeSettings) paths() []string {
	out := make([]string, len(f.read))
	for i, s := range f.read {
		out[i] = s.Path
	}
	return out
}

// settingsText is a settings file read and parsed once for an event.
type settingsText struct {
	guard.SettingsFile
	data []byte        // nil when it could not be read
	err  error         // reading it (fs.ErrNotExist: it is not there)
	doc  *settings.Doc // nil when it could not be read
}

// maxSettings bounds a settings file's read, far above any real one.
const maxSettings = 16 << 20

// readSettings reads through regular.ReadFile: a planted named pipe cannot hold the hook.
func readSettings(files []guard.SettingsFile) []settingsText {
	out := make([]settingsText, len(files))
	for i, f := range files {
		t := &out[i]
		t.SettingsFile = f
		data, err := regular.ReadFile(f.Path, maxSettings)
		if t.err = err; err == nil {
			t.data, t.doc = data, settings.Parse(data)
		}
	}
	return out
}

// texts are the settings as read, in the order the client reads them.
func (t *claudeSettings) texts() []settingsText {
	if t.list == nil {
		t.list = readSettings(t.read)
	}
	return t.list
}

// sharedFirst are the texts, the shared ones first.
func (t *claudeSettings) sharedFirst() []settingsText {
	texts := t.texts()
	return append([]settingsText{texts[t.at]}, slices.Delete(slices.Clone(texts), t.at, t.at+1)...)
}

// registrations are the stopgate programs the hook files register, these settings as read here.
func (t *claudeSettings) registrations(root, home string) []guard.Registered {
	read := map[string][]byte{}
	for _, s := range t.texts() {
		read[s.Path] = s.data // nil for one that could not be read: it registers none
	}
	return guard.Registrations(root, home, read)
}

// The OS wall: the client's sandbox and Edit deny rules, derived from the
// trusted base (trust.For) as the guard is (docs/security.md).

// wallRules returns the Edit deny rules of the trusted base's wall, and whether it is empty.
func wallRules(root, home, file string, cfg *config.Config, regs []guard.Registered) (rules []string, empty bool) {
	base, _ := trust.For(trust.Project{Root: root, Home: home, File: file, Config: cfg, Regs: regs})
	set := base.Wall()
	return denyRules(set, root, home), set.Empty()
}

// projectSet returns the wall of the project at root, with hook programs about to be registered.
func projectSet(env *cli.Env, root, file string, bins []string, registered ...string) *guard.Set {
	cfg, _, _ := config.Inspect(file, root, config.FileOnly)
	base, _ := trust.For(trust.Project{Root: root, Home: env.Getenv("HOME"), File: file, Config: cfg, Bins: bins, Registered: registered})
	return base.Wall()
}

// denyRules returns the Edit deny rules for set (a folder's covers its contents).
func denyRules(set *guard.Set, root, home string) []string {
	if home != "" {
		home = filepath.Clean(home) // $HOME as set, maybe with a trailing slash
	}
	var out []string
	for _, p := range set.Paths() {
		for _, path := range walled(p.Path) {
			st, err := os.Stat(filepath.FromSlash(path))
			dir := (err == nil && st.IsDir()) || p.Dir
			out = append(out, settings.DenyRule(filepath.ToSlash(root), filepath.ToSlash(home), path, dir))
		}
	}
	return out
}

// walled is the paths the wall names for a protected path: a glob is the
// paths it matches here, since Claude Code's sandbox does not apply a
// glob's deny rule to Bash (measured on 2.1.332).
func walled(path string) []string {
	if !strings.ContainsAny(path, "*?[") {
		return []string{path}
	}
	matches, _ := filepath.Glob(filepath.FromSlash(path)) // a bad pattern matches nothing
	for i, m := range matches {
		matches[i] = filepath.ToSlash(m)
	}
	return matches
}

// writeWall merges the OS wall alone into the project's settings.
func writeWall(env *cli.Env, root string, bins []string) error {
	files := settingsFiles(env, root)
	data, err := os.ReadFile(files.shared.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, wall, err := mergeWall(env, root, data, bins, nil)
	if err != nil {
		return err
	}
	if len(wall.added) > 0 {
		if err := settings.WriteFile(files.shared.Path, out); err != nil {
			return fmt.Errorf("writing %s: %w", files.shared.Name, err)
		}
	}
	wall.say(env, files)
	return nil
}

// wallMerge is the OS wall merged into the project's settings.
type wallMerge struct {
	off   bool // [settings] protect = []: nothing to wall in
	rules []string
	added []string // the settings it added
	st    settings.WallStatus
}

// mergeWall merges the sandbox settings and the deny rules into data, the project's settings.
func mergeWall(env *cli.Env, root string, data []byte, bins, registered []string) ([]byte, wallMerge, error) {
	set := projectSet(env, root, filepath.Join(root, project.ConfigName), bins, registered...)
	if set.Empty() {
		return data, wallMerge{off: true}, nil
	}
	rules := denyRules(set, root, env.Getenv("HOME"))
	out, added, st, err := settings.MergeWall(data, rules)
	if err != nil {
		return nil, wallMerge{}, settingsError(settingsFile, err)
	}
	return out, wallMerge{rules: rules, added: added, st: st}, nil
}

// say tells what the wall added, what settings keep against it, and what the machine lacks.
func (w wallMerge) say(env *cli.Env, files *claudeSettings) {
	name := files.shared.Name
	if w.off {
		fmt.Fprintf(env.Stdout, "%s: no OS wall: [settings] protect = [] protects nothing\n", name)
		return
	}
	if len(w.added) == 0 {
		fmt.Fprintf(env.Stdout, "%s: the OS wall is already there (sandbox, %s)\n", name, cli.Plural(len(w.rules), "deny rule", "deny rules"))
	} else {
		fmt.Fprintf(env.Stdout, "%s: the OS wall: added %s\n", name, cli.Plural(len(w.added), "setting", "settings"))
		for _, a := range w.added {
			fmt.Fprintf(env.Stdout, "  + %s\n", a)
		}
	}
	noteAgainst(env, files, w.st)
	if missing := missingTools(env); len(missing) > 0 {
		fmt.Fprintf(env.Stdout, "note: the OS sandbox needs %s, not installed here: until it is, the client refuses every Bash command (apt-get install %s)\n",
			strings.Join(missing, " and "), strings.Join(packages(missing), " "))
	}
}

// noteAgainst tells which sandbox keys are set against the wall, here or in local settings.
func noteAgainst(env *cli.Env, files *claudeSettings, st settings.WallStatus) {
	for _, a := range st.Against() {
		fmt.Fprintf(env.Stdout, "note: %s: %s; left as it is\n", files.shared.Name, a)
	}
	for _, f := range files.over() {
		data, err := os.ReadFile(f.Path)
		if err != nil {
			continue
		}
		if other, err := settings.InspectWall(data); err == nil {
			for _, a := range other.Against() {
				fmt.Fprintf(env.Stdout, "note: %s: %s; it overrides %s\n", f.Name, a, files.shared.Name)
			}
		}
	}
}

// missingTools returns what the client's sandbox needs and PATH lacks (Linux: bwrap, socat).
func missingTools(env *cli.Env) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	var out []string
	for _, t := range []string{"bwrap", "socat"} {
		onPath := slices.ContainsFunc(filepath.SplitList(env.Getenv("PATH")), func(dir string) bool {
			return executable(filepath.Join(dir, t))
		})
		if !onPath {
			out = append(out, t)
		}
	}
	return out
}

func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func packages(tools []string) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = cmp.Or(map[string]string{"bwrap": "bubblewrap"}[t], t) // else the tool's own name
	}
	return out
}

// wallFindings says whether the OS wall is up and why not; summary says it in a few words.
func wallFindings(env *cli.Env, ws workspace, cfg *config.Config, claude *claudeSettings, regs []guard.Registered) (out []finding, summary string) {
	out = confineFindings(ws, cfg)
	rules, nothing := wallRules(ws.root, env.Getenv("HOME"), ws.file, cfg, regs)
	summary = wallSummary(cfg, nothing)
	w, bad := readWalls(claude.texts())
	if bad != nil {
		return append(out, *bad), summary
	}
	if w.Read == 0 || nothing {
		return out, summary // no settings: hookFindings says so; protect = []: nothing to wall in
	}
	out = append(out, wallDown(claude, w, rules)...)
	if m := missingTools(env); w.Value["enabled"] && len(m) > 0 {
		out = append(out, warn(claude.shared.Name, "the OS sandbox needs "+strings.Join(m, " and ")+", not installed here: the client refuses every Bash command until it is",
			"apt-get install "+strings.Join(packages(m), " ")+" (as root; scripts/install-sandbox-tools does it)")...)
	}
	return out, summary
}

func wallSummary(cfg *config.Config, nothing bool) string {
	s := "the OS wall is up"
	if nothing {
		s = "nothing protected (protect = [])"
	}
	switch {
	case cfg == nil || !hasRun(cfg):
	case cfg.Settings.Confine == config.ConfineOff:
		s += "; run validators unconfined (confine = false)"
	default:
		s += "; run validators confined"
	}
	return s
}

// readWalls reads the wall from the settings files (settings.ReadWalls).
// A file of valid JSON shaped wrong is a finding; one that is not JSON is
// hookFindings' to report.
func readWalls(files []settingsText) (settings.Walls, *finding) {
	docs := make([]*settings.Doc, len(files))
	for i, f := range files {
		docs[i] = f.doc
	}
	w, bad, err := settings.ReadWalls(docs)
	var se *settings.Error
	if errors.As(err, &se) && docs[bad].JSON() {
		return w, &finding{loc: fmt.Sprintf("%s:%d:%d", files[bad].Name, se.Line, se.Column), warning: true,
			msg: se.Msg + ": the OS wall is down", hint: "fix it by hand, then run gate init again"}
	}
	return w, nil
}

// wallDown reports what takes the wall down: keys against it or unset, rules missing, exclusions.
func wallDown(files *claudeSettings, w settings.Walls, rules []string) []finding {
	var out []finding
	for _, a := range w.Against() {
		out = append(out, warn(fmt.Sprintf("%s:%d", files.read[a.File].Name, a.Line), a.Text+": the OS wall is down",
			"set it as gate init writes it, or keep it knowing the guard alone stands")...)
	}
	primary := files.shared.Name
	if unset := w.Unset(); len(unset) > 0 {
		out = append(out, warn(primary, "the OS wall is down: "+strings.Join(unset, ", ")+" not set, so the agent's Bash can write the protected set in ways the guard cannot see",
			`"gate init" writes the sandbox settings and keeps the rest of the file`)...)
	}
	if missing := w.Lacking(rules); len(missing) > 0 {
		out = append(out, warn(primary, "permissions.deny lacks "+strings.Join(missing, ", ")+": the sandbox and the Write/Edit tools let the agent change it",
			`"gate init" adds the deny rules of the protected set (run it again after adding a run validator)`)...)
	}
	if len(w.Excluded) > 0 {
		out = append(out, warn(primary, "sandbox.excludedCommands run outside the OS sandbox: "+strings.Join(w.Excluded, ", "),
			"keep it empty: an excluded command can write the protected set")...)
	}
	return out
}

// confineFindings says when run validators will not be confined: with confine = true, an error.
func confineFindings(ws workspace, cfg *config.Config) []finding {
	if cfg == nil || cfg.Settings.Confine == config.ConfineOff || !hasRun(cfg) {
		return nil
	}
	_, err := validator.Bwrap()
	if err == nil {
		return nil
	}
	loc := ws.rel(ws.file)
	if cfg.Settings.Confine == config.ConfineOn {
		return []finding{{loc: loc, msg: "settings.confine: run validators cannot be confined: " + err.Error() + "; every stop that runs one halts",
			hint: "install bubblewrap (scripts/install-sandbox-tools), or set confine = false"}}
	}
	return warn(loc, "run validators are not confined: "+err.Error()+"; code they run (the agent's tests) can rewrite the protected set",
		"install bubblewrap (scripts/install-sandbox-tools), or set confine = false to say they run unconfined")
}

// hasRun says whether cfg has a run validator (unknown counts as yes).
func hasRun(cfg *config.Config) bool {
	runs, err := cfg.Runs()
	return err != nil || len(runs) > 0
}

// initClientWall puts up the client's own wall (client.Wall), if any.
func initClientWall(env *cli.Env, c *client.Client, root string) error {
	if c.Wall == nil {
		return nil
	}
	set := projectSet(env, root, filepath.Join(root, project.ConfigName), nil) // init writes the project's own
	if set.Empty() {
		fmt.Fprintf(env.Stdout, "%s: no wall: [settings] protect = [] protects nothing\n", c.Title)
		return nil
	}
	return c.Wall.Up(env.Stdout, root, wallPaths(set))
}

// clientWallFindings says whether the client's own wall is up.
func clientWallFindings(env *cli.Env, ws workspace, c *client.Client) []finding {
	if c.Wall == nil {
		return nil
	}
	set := projectSet(env, ws.root, ws.file, nil) // gate check --config
	if set.Empty() {
		return nil
	}
	var out []finding
	for _, f := range c.Wall.Check(env.Getenv, ws.root, wallPaths(set)) {
		out = append(out, finding{loc: f.Loc, warning: f.Warning, msg: f.Msg, hint: f.Hint})
	}
	return out
}

// undoClientWall plans taking the client's wall out of its config.
func undoClientWall(env *cli.Env, c *client.Client, root string) (undo, error) {
	return undoFile(root, c.Wall.File(), func(u *undo, data []byte) (err error) {
		u.out, u.r, u.gone, err = c.Wall.Remove(data, root, wallPaths(projectSet(env, root, filepath.Join(root, project.ConfigName), nil)))
		return err
	})
}

func wallPaths(set *guard.Set) []client.Path {
	var out []client.Path
	for _, p := range set.Paths() {
		out = append(out, client.Path{Path: p.Path, Show: p.Show, Dir: p.Dir})
	}
	return out
}
