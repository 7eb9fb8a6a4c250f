package gate

import (
	"os"
	"slices"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/guard"
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
func (f claudeFiles) all() []guard.SettingsFile { return sharedFirst(f.read, f.at) }

// sharedFirst is xs, one per file of read in its order, with the shared
// ones' moved first (as all orders the files).
func sharedFirst[T any](xs []T, at int) []T {
	return append([]T{xs[at]}, slices.Delete(slices.Clone(xs), at, at+1)...)
}

// settingsText is a settings file read once and parsed once for an event,
// whatever the event asks of it.
type settingsText struct {
	guard.SettingsFile
	data []byte        // as os.ReadFile gave it
	err  error         // reading it (fs.ErrNotExist: it is not there)
	doc  *settings.Doc // data parsed; nil when nothing was read
}

// readSettings reads and parses each of files once.
func readSettings(files []guard.SettingsFile) []settingsText {
	out := make([]settingsText, len(files))
	for i, f := range files {
		t := &out[i]
		t.SettingsFile = f
		if t.data, t.err = os.ReadFile(f.Path); t.err == nil || t.data != nil {
			t.doc = settings.Parse(t.data)
		}
	}
	return out
}

// claudeTexts are the Claude Code settings, each read once for an event.
type claudeTexts struct {
	claudeFiles
	texts []settingsText // in the order of read
}

func (f claudeFiles) load() claudeTexts { return claudeTexts{f, readSettings(f.read)} }

// registrations are the stopgate programs the project's hook files
// register (guard.Registrations), these settings as read here.
func (t claudeTexts) registrations(root, home string) []guard.Registered {
	docs := map[string]*settings.Doc{}
	for _, s := range t.texts {
		docs[s.Path] = s.doc // nil, or empty, for one that could not be read: it registers none
	}
	return guard.Registrations(root, home, docs)
}
