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

// Events are the hook events the gate program handles: the stops (package
// stop) and Claude Code's ConfigChange.
var Events = hook.Handles[hook.Gate]

// configChangeInput returns the input when data is a ConfigChange, read
// from stdin before the stop hook would read it. ok with an error: data
// names ConfigChange but cannot be read as one; it is refused, never
// passed on as a stop (which would exit 1, and Claude Code take the change).
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

// unreadableChange answers a ConfigChange whose input cannot be read: in a
// stopgate project, a refusal (what it changes cannot be told); elsewhere
// the error, one line.
func unreadableChange(env *cli.Env, err error) error {
	root := project.Root(env.Getenv, "", env.Dir)
	if !stopgateProject(env, root, config.Path(root, "", env.Dir), settingsFiles(env, root).load()) {
		return err
	}
	return hook.AnswerTo(env.Stdout, nil).Write(hook.Block("stopgate refused this settings change: its ConfigChange input could not be read (" +
		err.Error() + "), so whether it weakens stopgate's hooks or its wall cannot be told; this session keeps the settings it had."))
}

// configChange is the gate's ConfigChange answer: Claude Code asks before a
// running session takes a changed settings file, and a block keeps the
// session on the settings it had. A change is refused when, as the files
// stand after it, stopgate is weaker than gate init left it: a stopgate
// hook no longer registered, disableAllHooks or an env that chooses what
// the hooks run (switchFindings), a sandbox key of the wall
// set against it or unset, a deny rule of the protected set dropped, a
// command excluded from the sandbox. Skills and managed policy (which no
// hook can refuse) pass, as does any change in a project that shows no
// stopgate (stopgateProject). In a project without the wall (gate init
// --no-wall: no part of it in any file, and the state dir's mark that it
// was chosen) only the hooks are judged. Each settings file is read and
// parsed once (settingsText), for every question asked of it.
func configChange(env *cli.Env, in *hook.Input) error {
	if in.Source == "skills" || in.Source == "policy_settings" {
		return nil
	}
	root, home := project.Root(env.Getenv, in.Cwd, env.Dir), env.Getenv("HOME")
	ws := workspace{root: root, file: config.Path(root, "", env.Dir)}
	claude := settingsFiles(env, root).load()
	cfg, _, err := config.Inspect(ws.file, ws.root, config.FileOnly)
	if errors.Is(err, fs.ErrNotExist) && !stopgateProject(env, root, ws.file, claude) {
		return nil
	}
	var why []string
	// A plugin's hooks run with its root in CLAUDE_PLUGIN_ROOT: they are
	// registered there, not in the settings.
	for _, f := range hookFindings(env, ws, cfg, env.Getenv("CLAUDE_PLUGIN_ROOT"), claude) {
		if !f.warning {
			why = append(why, f.loc+": "+f.msg)
		}
	}
	for _, f := range switchFindings(claude) {
		why = append(why, f.loc+": "+f.msg)
	}
	if rules, nothing := wallRules(root, home, ws.file, cfg, claude.registrations(root, home)); !nothing {
		w, bad := readWalls(claude.texts())
		switch {
		case bad != nil:
			why = append(why, bad.loc+": "+bad.msg)
		case !w.Present(rules) && noWallChosen(ws.stateDir()): // no wall to weaken (gate init --no-wall)
		default:
			for _, f := range wallDown(claude.claudeFiles, w, rules) {
				why = append(why, f.loc+": "+f.msg)
			}
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

// stopgateProject reports whether root shows stopgate: its config or its
// state dir there, the hook run from a plugin, or a settings file that
// registers a stopgate hook. A file that cannot be read or parsed counts
// when it names the gate at all: what it registers cannot be told.
func stopgateProject(env *cli.Env, root, file string, claude *claudeTexts) bool {
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
		if lerr != nil && bytes.Contains(src.data, []byte(hook.Gate)) {
			return true
		}
		if slices.ContainsFunc(found, func(f settings.Found) bool { return f.Registered }) {
			return true
		}
	}
	return false
}

// switchFindings are the keys of Claude Code's settings files, the user's
// included, that switch stopgate's hooks off or choose what they run:
// disableAllHooks, and an env that sets a variable of the trusted base's
// environment (trust.HookEnv), which the client hands to every hook and
// so to every validator. ConfigChange refuses a change that leaves one;
// gate check reports it. A file that cannot be read, hookFindings reports.
func switchFindings(claude *claudeTexts) []finding {
	var out []finding
	for _, src := range claude.sharedFirst() {
		if src.err != nil {
			continue
		}
		if src.doc.DisablesHooks() {
			out = append(out, finding{loc: src.Name, msg: "disableAllHooks is true", hint: "no hook runs, stopgate's included: remove it"})
		}
		out = append(out, envFindings(src.Name, src.doc.Env())...)
	}
	return out
}

// claudeFiles are the settings Claude Code reads hooks from
// (guard.ClaudeSettings): the project's shared ones, which gate init
// writes, its local ones, and the user's (none without $HOME).
type claudeFiles struct {
	shared guard.SettingsFile
	at     int                  // shared's place in read
	read   []guard.SettingsFile // every one, in the order the client reads them
}

// settingsFiles returns the project's and the user's Claude Code settings.
func settingsFiles(env *cli.Env, root string) claudeFiles {
	read := guard.ClaudeSettings(root, env.Getenv("HOME"))
	at := slices.IndexFunc(read, func(s guard.SettingsFile) bool { return s.Name == settingsFile })
	return claudeFiles{shared: read[at], at: at, read: read}
}

// others are the settings beside the shared ones: the user's, the local.
func (f claudeFiles) others() []guard.SettingsFile {
	return slices.Delete(slices.Clone(f.read), f.at, f.at+1)
}

// over are the settings the client reads after the shared ones, whose
// keys win over theirs: the local ones.
func (f claudeFiles) over() []guard.SettingsFile { return f.read[f.at+1:] }

// paths are the files' paths, in the order the client reads them.
func (f claudeFiles) paths() []string {
	out := make([]string, len(f.read))
	for i, s := range f.read {
		out[i] = s.Path
	}
	return out
}

// all are every settings file, the shared ones first.
func (f claudeFiles) all() []guard.SettingsFile {
	return append([]guard.SettingsFile{f.shared}, f.others()...)
}

// settingsText is a settings file read once and parsed once for an event,
// whatever the event asks of it.
type settingsText struct {
	guard.SettingsFile
	data []byte        // nil when it could not be read
	err  error         // reading it (fs.ErrNotExist: it is not there)
	doc  *settings.Doc // data parsed; nil when it could not be read
}

// maxSettings bounds a settings file's read, far above any real one: a
// file past it is refused, as one that cannot be read.
const maxSettings = 16 << 20

// readSettings reads and parses each of files once, through
// regular.ReadFile: a named pipe or a link to /dev/zero planted under its
// name cannot hold the hook (the client would take the change at its hook
// timeout); it is refused, as a file that cannot be read.
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

// claudeTexts are the Claude Code settings, each read and parsed once for
// an event, on first use (texts): a hook that needs none reads none.
type claudeTexts struct {
	claudeFiles
	list []settingsText // in the order of read; nil until texts
}

// load returns the settings, to be read when first asked for.
func (f claudeFiles) load() *claudeTexts { return &claudeTexts{claudeFiles: f} }

// texts are the settings as read, in the order the client reads them.
func (t *claudeTexts) texts() []settingsText {
	if t.list == nil {
		t.list = readSettings(t.read)
	}
	return t.list
}

// sharedFirst are the texts, the shared ones first (as all orders them).
func (t *claudeTexts) sharedFirst() []settingsText {
	texts := t.texts()
	return append([]settingsText{texts[t.at]}, slices.Delete(slices.Clone(texts), t.at, t.at+1)...)
}

// registrations are the stopgate programs the project's hook files
// register (guard.Registrations), these settings as read here.
func (t *claudeTexts) registrations(root, home string) []guard.Registered {
	read := map[string][]byte{}
	for _, s := range t.texts() {
		read[s.Path] = s.data // nil for one that could not be read: it registers none
	}
	return guard.Registrations(root, home, read)
}
