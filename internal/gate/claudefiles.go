package gate

import (
	"slices"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/settings"
)

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
