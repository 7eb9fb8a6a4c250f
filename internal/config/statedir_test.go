package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// stateDirTexts are configs, most of which decode, spelling state_dir in
// every way the scan must read, or must leave to the decoder.
var stateDirTexts = []string{
	"",
	"[settings]\nstate_dir = \"s\"\n",
	"[settings]\n  state_dir='s' # comment\n",
	"[settings]\nprompts_dir = \"p\"\nstate_dir = \"/abs\"",
	"[settings]\nstate_dir = \"/abs/../x/\"\n",
	"# state_dir = \"no\"\n[settings]\nstate_dir = \"yes\"\n",
	"[validators.v]\nstate_dir = \"no\"\n",
	"[settings]\nstate_dir = \"esc\\\"aped\"\n",
	"[settings]\nstate_dirs = \"no\"\n",
	"settings.state_dir = \"dotted\"\n",
	"settings = { state_dir = \"inline\" }\n",
	"[settings]\n\"state_dir\" = \"quoted\"\n",
	"[settings]\n\"state\\u005fdir\" = \"escaped key\"\n",
	"[settings]\r\nstate_dir = \"crlf\"\r\n",
	"[settings] # the settings\nstate_dir = \"s\"\n",
	"[ settings ]\nstate_dir = \"spaced\"\n",
	"[settings.x]\nstate_dir = \"sub\"\n",
	"[validators.v]\nfix = \"\"\"\nstate_dir = \"x\"\n\"\"\"\n[settings]\nstate_dir = \"s\"\n",
	"[validators.v]\nfix = '''\n[settings]\nstate_dir = \"x\"\n'''\n",
	"[settings]\nprotect = [\n  \"a\",\n]\nstate_dir = \"after array\"\n",
	"[settings]\nfoo = {\nstate_dir = \"inline, split\"\n}\n",
	"[settings]\nstate_dir = \"\"\n",
	"[settings]\nstate_dir = 3\n",
	"[settings]\nstate_dir = \"s\"\nmax_blocks =\n",
	"[settings]\nstate_dir = \"s\n",
	"[[mapping]]\nprompt = \"x\"\nvalidators = [\"v\"]\n[validators.v]\nregex = \"\\\\u00e9\"\nfile = \"x\"\n",
	cachedConfigs["example"],
	cachedConfigs["prompts-at-root"],
	"[settings]\nstate_dir = \".state\" # here\n" + cachedConfigs["many"],
}

// TestLoadStateDirAgreesWithParse checks that a hook's Load, which looks
// for the cache before it decodes, names the state dir Parse does, from
// the cache or not, and finds its cache at the second load.
func TestLoadStateDirAgreesWithParse(t *testing.T) {
	loaded, sure := 0, 0
	for _, text := range stateDirTexts {
		root := t.TempDir()
		file := writeConfig(t, root, text)
		want, err := Parse([]byte(text), file, root)
		if err != nil || !strings.HasPrefix(want.StateDir(), root) {
			continue // not a config a hook loads, or a state dir outside the test's
		}
		loaded++
		setting, ok := plainStateDir([]byte(text))
		if ok {
			sure++
			if stateDir(root, setting) != want.StateDir() {
				t.Errorf("%q: the plain scan is sure of %q; Parse says %q", text, setting, want.StateDir())
			}
		}
		for i := range 2 {
			got, err := Load(file, root)
			if err != nil || got.StateDir() != want.StateDir() {
				t.Fatalf("%q: Load = %v; Parse says %q", text, err, want.StateDir())
			}
			if i == 1 && got.cached == nil {
				t.Errorf("%q: the second load did not read the cache", text)
			}
		}
	}
	if loaded < 10 || sure < loaded/2 {
		t.Errorf("%d of the texts load, the scan is sure of %d", loaded, sure)
	}
}

// TestPlainStateDirSure pins which spellings the plain scan is sure of:
// only those, the decoder's answer for every text that loads, let a hook
// read a cache without decoding.
func TestPlainStateDirSure(t *testing.T) {
	for _, tc := range []struct {
		text, want string
		sure       bool
	}{
		{"", "", true},
		{"[settings]\nstate_dir = \"s\"\n", "s", true},
		{"[settings]\n  state_dir='s' # comment\n", "s", true},
		{"[settings]\nstate_dir = \"\"\n", "", true},
		{"# state_dir = \"tmp/sg\"\n", "", false}, // a comment: not the setting
		{"[validators.v]\nstate_dir = \"no\"\n", "", false},
		{"[settings]\nstate_dir = \"esc\\\"aped\"\n", "", false},
		{"settings.state_dir = \"dotted\"\n", "", false},
		{"[settings]\n\"state\\u005fdir\" = \"escaped key\"\n", "", false},
		{"[validators.v]\nfix = \"\"\"\nstate_dir = \"x\"\n\"\"\"\n[settings]\nstate_dir = \"s\"\n", "s", false},
	} {
		if got, sure := plainStateDir([]byte(tc.text)); got != tc.want || sure != tc.sure {
			t.Errorf("plainStateDir(%q) = %q, %v; want %q, %v", tc.text, got, sure, tc.want, tc.sure)
		}
	}
}

// TestCachePlantedOutsideStateDir is the attack: a cache for the exact
// text, planted by the agent where the guard does not protect (the default
// state dir of a config that moves it, a folder a comment names), saying
// nothing is mapped. Load parses instead.
func TestCachePlantedOutsideStateDir(t *testing.T) {
	root := t.TempDir()
	text := "# state_dir = \"tmp/sg\"\n[settings]\nstate_dir = \".state\"\n" + cachedConfigs["many"]
	file := writeConfig(t, root, text)
	real := loadCached(t, file, root) // writes the real cache under .state
	if len(real.Mappings) == 0 && real.cached == nil {
		t.Fatal("the example maps nothing")
	}
	forged := &Config{Settings: real.Settings, key: real.key}
	for _, dir := range []string{DefaultStateDir, "tmp/sg"} {
		writeCache(cachePath(stateDir(root, dir), file), encodeCache(forged, []byte(text), contextKey()))
	}
	if err := os.RemoveAll(filepath.Join(root, ".state")); err != nil {
		t.Fatal(err)
	}
	got, err := Load(file, root)
	if err != nil || got.cached != nil {
		t.Fatalf("Load = %v, from a cache: %v", err, got != nil && got.cached != nil)
	}
	full, err := got.Full()
	if err != nil || len(full.Mappings) == 0 {
		t.Fatalf("the planted cache answered: %d mappings, %v", len(full.Mappings), err)
	}
}

// TestReadStateDirUndecodable checks the state dir and the error of texts
// that do not decode: the best readable dir, and the decoder's mistake at
// its line.
func TestReadStateDirUndecodable(t *testing.T) {
	for _, tc := range []struct{ text, want, err string }{
		{text: "[settings]\nstate_dir = \"s\"\nmax_blocks =\n", want: "s", err: "mappings.toml:3: "},
		{text: "[settings]\nstate_dir = \"s\n", want: DefaultStateDir, err: "mappings.toml:2: "},
		{text: "[settings]\nstate_dir = 3\n", want: DefaultStateDir, err: "mappings.toml:2: "},
	} {
		root := t.TempDir()
		got, err := ReadStateDir(writeConfig(t, root, tc.text), root)
		if got != filepath.Join(root, tc.want) || err == nil || !strings.HasPrefix(err.Error(), tc.err) {
			t.Errorf("ReadStateDir(%q) = %q, %v; want %q, error %q…", tc.text, got, err, tc.want, tc.err)
		}
	}
}

func TestReadStateDir(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "mappings.toml")
	dir, err := ReadStateDir(file, root)
	if !errors.Is(err, fs.ErrNotExist) || dir != filepath.Join(root, DefaultStateDir) {
		t.Errorf("no file: %q, %v; want the default and ErrNotExist", dir, err)
	}
	// A mistake the decoder reads past changes nothing.
	writeConfig(t, root, "[settings]\nstate_dir = \"s\"\nmax_blocks = 99\nbogus = 1\n")
	if dir, err := ReadStateDir(file, root); err != nil || dir != filepath.Join(root, "s") {
		t.Errorf("other mistakes: %q, %v", dir, err)
	}
	// One it cannot read past is reported, beside the best readable dir.
	if err := os.WriteFile(file, []byte("[settings]\nstate_dir = \"s\"\nmax_blocks =\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err = ReadStateDir(file, root)
	if err == nil || !strings.HasPrefix(err.Error(), "mappings.toml:3: ") || !strings.HasSuffix(err.Error(), "(the state dir cannot be read)") {
		t.Errorf("syntax error: %v", err)
	}
	if dir != filepath.Join(root, "s") {
		t.Errorf("syntax error: %q, want the plain line's", dir)
	}
}

// checkStateDir is FuzzParseConfig's check that the state dir a hook
// finds without parsing (textStateDir) is the one a config that loads
// names: the cache is trusted only there.
func checkStateDir(t *testing.T, data []byte, cfg *Config) {
	if got, ok := textStateDir(data, cfg.Root); !ok || got != cfg.StateDir() {
		t.Fatalf("textStateDir = %q, %v; the config names %q", got, ok, cfg.StateDir())
	}
}

// TestMentions checks Load's test of the text: state_dir, \u and \U are
// seen wherever they fall.
func TestMentions(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"[settings]\nmax_blocks = 3\n", false},
		{"[settings]\nstate_dir = \"s\"\n", true},
		{"# state_dir\n", true},
		{"x = \"\\u0041\"\n", true},
		{"x = \"\\U00000041\"\n", true},
		{"x = \"\\n_dir state\"\n", false},
	} {
		if got := mentionsStateDir([]byte(tc.text)); got != tc.want {
			t.Errorf("%q: seen %v, want %v", tc.text, got, tc.want)
		}
	}
}

// TestSameTextMentionsAcrossReads: a state_dir that straddles two reads
// of the text compare is still seen, so the default dir's cache is not
// trusted for a text that names another.
func TestSameTextMentionsAcrossReads(t *testing.T) {
	for _, at := range []int{1, 4, 8} { // bytes of "state_dir" in the first read
		pad := strings.Repeat("#", 32<<10-at)
		for _, tc := range []struct {
			text string
			want bool
		}{{pad + "state_dir\n", true}, {pad + "state_dit\n", false}, {pad + `\u0041`, true}} {
			same, mentions := sameText(strings.NewReader(tc.text), strings.NewReader(tc.text), int64(len(tc.text)))
			if !same || mentions != tc.want {
				t.Errorf("split after %d: same %v, mentions %v; want true, %v", at, same, mentions, tc.want)
			}
		}
	}
}
