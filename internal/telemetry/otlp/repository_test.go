package otlp

import (
	"os"
	"path/filepath"
	"testing"
)

// The repository is origin's URL, whatever other keys and sections surround
// it, without credentials; without one, the folder's name.
func TestRepositoryFromGitConfig(t *testing.T) {
	for cfg, want := range map[string]string{
		"[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://user:token@git.example.com/acme/payments.git\n":      "payments https://git.example.com/acme/payments.git",
		"[remote \"origin\"]\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n\n\tpushurl = x\n  url = git@h:a/b.git  \r\n": "b git@h:a/b.git",
		"[remote \"up\"]\n\turl = x/y\n[remote \"origin\"]\n\tfetch = a\n[branch \"main\"]\n\turl = no\n":                  "R ",
		"[remote \"origin\"]\n\turl = https://h/a/repo/":                                                                   "repo https://h/a/repo/",
		"[core]\r\n[remote \"origin\"]\r\n\r\n\turl = https://h/acme/payments.git\r\n":                                     "payments https://h/acme/payments.git",
		"[remote \"origin\"]\r\n\turl = https://h/a/last.git\r":                                                            "last https://h/a/last.git",
		"": "R ",
	} {
		root := filepath.Join(t.TempDir(), "R")
		os.MkdirAll(filepath.Join(root, ".git"), 0o755)
		os.WriteFile(filepath.Join(root, ".git", "config"), []byte(cfg), 0o644)
		n, r := repository(root)
		if n+" "+r != want {
			t.Errorf("%q: %q %q want %q", cfg, n, r, want)
		}
	}
}
