package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	tests := []struct {
		dir, key string
		want     string // "file|command" names, space-separated
	}{
		{"src/prompts", "joke", "src/prompts/joke.md .claude/commands/joke.md -/joke.md .claude/skills/joke/SKILL.md /joke"},
		{"src/prompts", "git/commit", "src/prompts/git/commit.md .claude/commands/git/commit.md .claude/commands/git-commit.md -/git-commit.md /git:commit /git-commit"},
		{"src/prompts", "release-notes", "src/prompts/release-notes.md .claude/commands/release-notes.md -/release-notes.md .claude/skills/release-notes/SKILL.md /release-notes"},
		{".claude/commands", "git/commit", ".claude/commands/git/commit.md .claude/commands/git-commit.md -/git-commit.md /git:commit /git-commit"},
		{".", "a/b", "a/b.md .claude/commands/a/b.md .claude/commands/a-b.md -/a-b.md /a:b /a-b"},
		{"src/prompts", "myplugin:review", "/myplugin:review /review"},
		{"src/prompts", "myplugin:deep:check", "/myplugin:deep:check"},
	}
	for _, tt := range tests {
		var got []string
		for _, n := range Names(tt.dir, tt.key) {
			if n.File != "" {
				got = append(got, n.File)
			} else {
				got = append(got, "/"+n.Command)
			}
			if (n.File == "") == (n.Command == "") || n.Layout == "" {
				t.Errorf("Names(%q, %q): malformed %+v", tt.dir, tt.key, n)
			}
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("Names(%q, %q) =\n  %s\nwant\n  %s", tt.dir, tt.key, strings.Join(got, " "), tt.want)
		}
	}
}

// TestKeyOf: the key a file would have is one whose Names hold the file.
func TestKeyOf(t *testing.T) {
	tests := []struct{ rel, key, layout string }{
		{"src/prompts/git/commit.md", "git/commit", LayoutPromptsDir},
		{".claude/commands/git/commit.md", "git/commit", LayoutCommand},
		{".claude/commands/git-commit.md", "git-commit", LayoutCommand},
		{".claude/skills/release-notes/SKILL.md", "release-notes", LayoutSkill},
		{".claude/skills/release-notes/other.md", "", ""},
		{".claude/skills/a/b/SKILL.md", "", ""},
		{"-/git-commit.md", "git-commit", LayoutMirror},
		{"docs/x.md", "", ""},
		{"src/prompts/x.txt", "", ""},
	}
	for _, tt := range tests {
		key, layout := KeyOf("src/prompts", tt.rel)
		if key != tt.key || layout != tt.layout {
			t.Errorf("KeyOf(%q) = %q, %q; want %q, %q", tt.rel, key, layout, tt.key, tt.layout)
		}
		if key == "" {
			continue
		}
		found := false
		for _, n := range Names("src/prompts", key) {
			found = found || n.File == tt.rel
		}
		if !found {
			t.Errorf("KeyOf(%q) = %q, whose Names do not hold it", tt.rel, key)
		}
	}
}

func TestSpelling(t *testing.T) {
	for _, s := range []string{"git:commit", "git-commit", "/git:commit", "git/commit"} {
		if got := Spelling(s); got != "git/commit" {
			t.Errorf("Spelling(%q) = %q", s, got)
		}
	}
}

// TestBadPluginKey: a key is a path or a plugin command's name, not both.
func TestBadPluginKey(t *testing.T) {
	for key, bad := range map[string]bool{"p:review": false, "p:deep:check": false, "p:a/b": true, ":x": true, "p:": true, "p::x": true, "a/b": false} {
		msg, _ := badPromptKey(key)
		if (msg != "") != bad {
			t.Errorf("badPromptKey(%q) = %q, want bad=%v", key, msg, bad)
		}
	}
	if !reflect.DeepEqual(Names("", "p:x")[0], Name{Command: "p:x", Layout: LayoutPlugin}) {
		t.Errorf("Names of a plugin key: %+v", Names("", "p:x"))
	}
}

// TestMatchPathPromptsDirOverlaps: a prompts_dir that is, or holds, a
// folder of another layout still arms its prompts. KeyOf names one key per
// file and answers "" under .claude/skills/ for anything but SKILL.md, so
// it cannot be MatchPath's pre-filter: a prompts_dir of .claude/skills/x
// read that way left every prompt in it unarmed.
func TestMatchPathPromptsDirOverlaps(t *testing.T) {
	tests := []struct{ dir, key, rel string }{
		{".claude/skills/prompts", "deploy", ".claude/skills/prompts/deploy.md"},
		{".claude/skills", "deploy", ".claude/skills/deploy.md"},
		{".", ".claude/skills/deploy", ".claude/skills/deploy.md"},
		{"src/prompts", "deploy", "src/prompts/deploy.md"},
	}
	for _, tt := range tests {
		text := "[settings]\nprompts_dir = \"" + tt.dir + "\"\n\n[[mapping]]\nprompt = \"" + tt.key + "\"\nvalidators = [\"v\"]\n\n[validators.v]\nrun = \"true\"\n"
		cfg, err := Parse([]byte(text), "mappings.toml", t.TempDir())
		if err != nil {
			t.Fatalf("prompts_dir %q: %v", tt.dir, err)
		}
		got, err := cfg.MatchPath(tt.rel)
		if err != nil || len(got) != 1 || got[0].Prompt != tt.key {
			t.Errorf("prompts_dir %q: MatchPath(%q) = %v, %v; want the mapping %q", tt.dir, tt.rel, got, err, tt.key)
		}
	}
}
