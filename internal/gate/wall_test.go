package gate

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
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

func TestLaterSettingsWin(t *testing.T) {
	order := []string{"~/.claude/settings.json", settingsFile, ".claude/settings.local.json"}
	for i := range order {
		for j := range order {
			if got := later(order[i], order[j]); got != (i > j) {
				t.Errorf("later(%s, %s) = %v", order[i], order[j], got)
			}
		}
	}
}

// The deny rules and the confinement are the guard's protected set.
func TestWallIsTheProtectedSet(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "validators"), 0o755)
	cfg, err := config.Parse([]byte("[settings]\nstate_dir = \"var/state\"\nprotect = [\"docs/policy.md\"]\n\n[[mapping]]\nprompt = \"p\"\nvalidators = [\"v\", \"w\"]\n\n[validators.v]\nrun = \"validators/v.sh\"\n\n[validators.w]\nrun = \"go test ./...\"\n"),
		filepath.Join(root, "mappings.toml"), root)
	if err != nil {
		t.Fatal(err)
	}
	set := protectedSet(root, "/home/u", cfg.File, cfg, nil, "/home/u/.claude/projects/x/s1.jsonl")
	rules := denyRules(set, root, "/home/u", cfg.StateDir())
	for _, want := range []string{"Edit(/var/state/**)", "Edit(/mappings.toml)", "Edit(/validators/**)", "Edit(/.claude/settings.json)",
		"Edit(/bin/gate)", "Edit(/docs/policy.md)", "Edit(~/.claude/projects/x/s1.jsonl)"} {
		if !slices.Contains(rules, want) {
			t.Errorf("no %s in %q", want, rules)
		}
	}
	c := confinement(cfg, &hookInputWithTranscript)
	if c == nil || len(c.ReadOnly) != len(set.Paths()) || c.Required {
		t.Fatalf("confinement %+v, want the %d protected paths, not required", c, len(set.Paths()))
	}
	cfg.Settings.Confine = config.ConfineOff
	if c := confinement(cfg, &hookInputWithTranscript); c != nil {
		t.Errorf("confine = false: %+v", c)
	}
	cfg.Settings.Confine, cfg.Settings.Protect = config.ConfineOn, []string{}
	if c := confinement(cfg, &hookInputWithTranscript); c == nil || !c.Required || len(c.ReadOnly) != 0 {
		t.Errorf("confine = true, protect = []: %+v", c)
	}
}

var hookInputWithTranscript = hook.Input{SessionID: "s1", HookEventName: hook.Stop, TranscriptPath: "/home/u/.claude/projects/x/s1.jsonl"}
