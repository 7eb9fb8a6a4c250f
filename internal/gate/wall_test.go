package gate

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/trust"
)

func TestMissingTools(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox tools are Linux's")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bwrap"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "socat"), []byte("#!/bin/sh\n"), 0o644) // not executable
	for path, want := range map[string][]string{
		dir:                     {"socat"},
		t.TempDir():             {"bwrap", "socat"},
		"":                      {"bwrap", "socat"},
		t.TempDir() + ":" + dir: {"socat"},
	} {
		env := &cli.Env{Getenv: func(k string) string { return map[string]string{"PATH": path}[k] }}
		if got := missingTools(env); !slices.Equal(got, want) {
			t.Errorf("PATH=%s: missing %q, want %q", path, got, want)
		}
	}
	if got := packages([]string{"bwrap", "socat"}); !slices.Equal(got, []string{"bubblewrap", "socat"}) {
		t.Errorf("packages: %q", got)
	}
}

// The deny rules are the guard's protected set.
func TestWallIsTheProtectedSet(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "validators"), 0o755)
	cfg, err := config.Parse([]byte(wallConfig), filepath.Join(root, "mappings.toml"), root)
	if err != nil {
		t.Fatal(err)
	}
	base, err := trust.For(trust.Project{Root: root, Home: "/home/u", File: cfg.File, Config: cfg, Transcript: "/home/u/.claude/projects/x/s1.jsonl"})
	if err != nil {
		t.Fatal(err)
	}
	rules := denyRules(base.Wall(), root, "/home/u")
	for _, want := range []string{"Edit(/var/state/**)", "Edit(/mappings.toml)", "Edit(/validators/**)", "Edit(/.claude/settings.json)",
		"Edit(/bin/gate)", "Edit(/docs/policy.md)", "Edit(~/.claude/projects/x/s1.jsonl)"} {
		if !slices.Contains(rules, want) {
			t.Errorf("no %s in %q", want, rules)
		}
	}
}

const wallConfig = "[settings]\nstate_dir = \"var/state\"\nprotect = [\"docs/policy.md\"]\n\n[[mapping]]\nprompt = \"p\"\nvalidators = [\"v\", \"w\"]\n\n[validators.v]\nrun = \"validators/v.sh\"\n\n[validators.w]\nrun = \"go test ./...\"\n"
