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
// the cache or not, and finds its cache where the text names it in all
// but three spellings: an escape in the key or the value, and a decoy line
// in a multi-line string before the setting (a miss costs a parse).
func TestLoadStateDirAgreesWithParse(t *testing.T) {
	loaded, guessed := 0, 0
	for _, text := range stateDirTexts {
		root := t.TempDir()
		file := writeConfig(t, root, text)
		want, err := Parse([]byte(text), file, root)
		if err != nil || !strings.HasPrefix(want.StateDir(), root) {
			continue // not a config a hook loads, or a state dir outside the test's
		}
		loaded++
		found := want.StateDir() == stateDir(root, "") || want.StateDir() == stateDir(root, guessStateDir([]byte(text)))
		if found {
			guessed++
		}
		for i := range 2 {
			got, err := Load(file, root)
			if err != nil || got.StateDir() != want.StateDir() {
				t.Fatalf("%q: Load = %v; Parse says %q", text, err, want.StateDir())
			}
			if i == 1 && found && got.cached == nil {
				t.Errorf("%q: the second load did not read the cache in %s", text, want.StateDir())
			}
		}
	}
	if loaded < 10 || guessed < loaded-3 {
		t.Errorf("%d of the texts load, the cache of %d is found", loaded, guessed)
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
