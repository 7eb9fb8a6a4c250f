package testhook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/cli"
)

func TestStateDir(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		name, config, flag string
		want, err          string
	}{
		{name: "no mappings.toml", want: filepath.Join(root, "tmp/validation")},
		{name: "default", config: "[settings]\nmax_blocks = 3\n", want: filepath.Join(root, "tmp/validation")},
		{name: "relative", config: "[settings]\nstate_dir = \"var/sg\"\n", want: filepath.Join(root, "var/sg")},
		{name: "absolute", config: "[settings]\nstate_dir = \"/srv/sg/\"\n", want: "/srv/sg"},
		// The gate reports these; the runner needs only the state dir.
		{name: "other mistakes", config: "[settings]\nstate_dir = \"s\"\nmax_blocks = 99\nbogus = 1\n[[mapping]]\nprompt = \"x\"\n", want: filepath.Join(root, "s")},
		{name: "syntax error", config: "[settings]\nstate_dir = \"s\n", err: "mappings.toml:2: "},
		{name: "wrong type", config: "[settings]\nstate_dir = 3\n", err: "mappings.toml:2: settings.state_dir: is an integer, want a string"}, // located since the decoder is the one reader
		{name: "missing --config", flag: "nope.toml", err: "no such file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(root, "mappings.toml")
			os.Remove(path)
			if tc.config != "" {
				if err := os.WriteFile(path, []byte(tc.config), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var got string
			r, err := newRunner(&cli.Env{Getenv: func(string) string { return "" }, Dir: root}, tc.flag, root)
			if err == nil {
				got = r.dir
			}
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("stateDir = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}
