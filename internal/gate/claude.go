package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/settings"
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
