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

// TestStateDirInAgreesWithParse checks the scan against the decoder: on a
// text that loads, stateDirIn answers as Parse does, with or without the
// check.
func TestStateDirInAgreesWithParse(t *testing.T) {
	root := "/project"
	loaded := 0
	for _, text := range stateDirTexts {
		cfg, err := Parse([]byte(text), filepath.Join(root, "mappings.toml"), root)
		if err != nil {
			continue
		}
		loaded++
		for _, checked := range []bool{true, false} {
			if got, err := stateDirIn([]byte(text), root, checked); err != nil || got != cfg.StateDir() {
				t.Errorf("%q, checked %v: %q, %v; Parse says %q", text, checked, got, err, cfg.StateDir())
			}
		}
	}
	if loaded < 10 {
		t.Errorf("only %d of the texts load", loaded)
	}
}

func TestStateDirIn(t *testing.T) {
	root := "/project"
	def := filepath.Join(root, DefaultStateDir)
	for _, tc := range []struct {
		text, want, err string
		sure            bool // read by the scan alone
	}{
		{text: "", want: def, sure: true},
		{text: "[settings]\nstate_dir = \"s\"\n", want: "/project/s", sure: true},
		{text: "[settings]\n  state_dir='s' # comment\n", want: "/project/s", sure: true},
		{text: "[settings]\nstate_dir = \"/abs/../x/\"\n", want: "/x", sure: true},
		{text: "[settings]\nstate_dir = \"\"\n", want: def, sure: true},
		{text: "[validators.v]\nstate_dir = \"no\"\n", want: def},
		{text: "[settings]\nstate_dir = \"esc\\\"aped\"\n", want: "/project/esc\"aped"},
		{text: "settings.state_dir = \"dotted\"\n", want: "/project/dotted"},
		{text: "[settings]\n\"state\\u005fdir\" = \"escaped key\"\n", want: "/project/escaped key"},
		{text: "[validators.v]\nfix = \"\"\"\nstate_dir = \"x\"\n\"\"\"\n[settings]\nstate_dir = \"s\"\n", want: "/project/s"},
		// Texts that do not decode: the best readable dir, and the error.
		{text: "[settings]\nstate_dir = \"s\"\nmax_blocks =\n", want: "/project/s", err: ":3: ", sure: true},
		{text: "[settings]\nstate_dir = \"s\n", want: def, err: ":2: "},
		{text: "[settings]\nstate_dir = 3\n", want: def, err: ": "},
	} {
		got, err := stateDirIn([]byte(tc.text), root, true)
		if got != tc.want || (err == nil) != (tc.err == "") || err != nil && !strings.HasPrefix(err.Error(), tc.err) {
			t.Errorf("stateDirIn(%q) = %q, %v; want %q, error %q", tc.text, got, err, tc.want, tc.err)
		}
		if _, sure := plainStateDir([]byte(tc.text)); sure != tc.sure {
			t.Errorf("plainStateDir(%q): sure = %v, want %v", tc.text, sure, tc.sure)
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

// checkStateDir is FuzzParseConfig's check that the state dir a hook reads
// without parsing (stateDirIn) is the one a config that loads names.
func checkStateDir(t *testing.T, data []byte, cfg *Config) {
	if got, err := stateDirIn(data, cfg.Root, false); err != nil || got != cfg.StateDir() {
		t.Fatalf("stateDirIn = %q, %v; the config names %q", got, err, cfg.StateDir())
	}
}
