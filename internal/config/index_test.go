package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestMatch(t *testing.T) {
	cfg, err := Parse([]byte(example), "/p/mappings.toml", "/p")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, command string
		want          string
	}{
		{path: "src/prompts/joke.md", want: "joke"},
		{path: "src/prompts/git/worktrees/create.md", want: "git/worktrees/create"},
		{path: ".claude/commands/git-worktrees-create.md", want: "git/worktrees/create"},
		{path: "-/joke.md", want: "joke"},
		{path: ".claude/commands/joke.md", want: "joke"},
		{path: "src/prompts/git-worktrees-create.md"},
		{path: "src/prompts/joke"},
		{path: "joke.md"},
		{path: "src/prompts/JOKE.md"},
		{command: "joke", want: "joke"},
		{command: "git-worktrees-create", want: "git/worktrees/create"},
		{command: "git:worktrees:create", want: "git/worktrees/create"},
		{command: "git/worktrees/create"},
		{command: "jokes"},
		{command: "git:worktrees-create"},
		{path: ".claude/commands/git/worktrees/create.md", want: "git/worktrees/create"},
		{path: ".claude/skills/joke/SKILL.md", want: "joke"},
		{path: ".claude/skills/joke/skill.md"},
		{path: ".claude/skills/git/worktrees/create/SKILL.md"},
		{path: ".claude/skills/git-worktrees-create/SKILL.md"},
		{path: ".claude/commands/git:worktrees:create.md"},
	}
	for _, tt := range tests {
		var ms []*Mapping
		if tt.command != "" {
			ms, _ = cfg.MatchCommand(tt.command)
		} else {
			ms, _ = cfg.MatchPath(tt.path)
		}
		var got []string
		for _, m := range ms {
			got = append(got, m.Prompt)
		}
		if strings.Join(got, ",") != tt.want {
			t.Errorf("match(%q%q) = %v, want %q", tt.path, tt.command, got, tt.want)
		}
	}
}

func TestMatchPromptsDirVariants(t *testing.T) {
	for _, dir := range []string{"prompts", "prompts/", "./prompts", "."} {
		cfg, err := Parse([]byte(fmt.Sprintf("[settings]\nprompts_dir = %q\n[[mapping]]\nprompt = \"a/b\"\nvalidators = [\"v\"]\n[validators.v]\nfile = \"x\"\n", dir)), "m", "/")
		if err != nil {
			t.Fatal(err)
		}
		want := "prompts/a/b.md"
		if dir == "." {
			want = "a/b.md"
		}
		if ms, _ := cfg.MatchPath(want); len(ms) != 1 {
			t.Errorf("prompts_dir %q: no match for %s (paths %v)", dir, want, cfg.Files("a/b"))
		}
	}
}

// TestCommandCollision: two keys with the same D form both arm.
func TestCommandCollision(t *testing.T) {
	cfg, err := Parse([]byte("[[mapping]]\nprompt = \"a/b\"\nvalidators = [\"v\"]\n[[mapping]]\nprompt = \"a-b\"\nvalidators = [\"v\"]\n[validators.v]\nfile = \"x\"\n"), "m", "/")
	if err != nil {
		t.Fatal(err)
	}
	if ms, _ := cfg.MatchCommand("a-b"); len(ms) != 2 {
		n := len(ms)
		t.Errorf("MatchCommand(a-b) = %d mappings, want 2", n)
	}
	if ms, _ := cfg.MatchPath(".claude/commands/a-b.md"); len(ms) != 2 {
		n := len(ms)
		t.Errorf("MatchPath(.claude/commands/a-b.md) = %d mappings, want 2", n)
	}
	// The nested names are a/b's alone.
	byCommand, _ := cfg.MatchCommand("a:b")
	byPath, _ := cfg.MatchPath(".claude/commands/a/b.md")
	for _, got := range [][]*Mapping{byCommand, byPath} {
		if len(got) != 1 || got[0].Prompt != "a/b" {
			t.Errorf("a nested name arms %v, want a/b alone", got)
		}
	}
}
