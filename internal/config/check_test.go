package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInspect(t *testing.T) {
	tests := []struct {
		name  string
		toml  string
		files map[string]string // path → content; "#!" makes it executable
		depth Depth
		want  []string // Problem.Error() with " (warning)" for warnings
	}{{
		name: "clean",
		toml: example,
		files: map[string]string{
			"src/prompts/joke.md":                 "# joke",
			"src/prompts/git/worktrees/create.md": "# worktree",
			"validators/validate-worktree.sh":     "#!/bin/sh\n",
		},
		depth: Project,
	}, {
		name: "unused validator and no mappings",
		toml: "[validators.lonely]\nfile = \"x\"\n",
		want: []string{
			"mappings.toml: no [[mapping]]: nothing will be checked (warning)",
			`mappings.toml:1: validators.lonely: validator "lonely" is not used by any mapping (warning)`,
		},
	}, {
		name: "project checks need depth Project",
		toml: "[[mapping]]\nprompt = \"p\"\nvalidators = [\"v\"]\n[validators.v]\nrun = \"validators/missing.sh\"\n",
	}, {
		name: "missing and non-executable programs, prompt without files",
		toml: `[[mapping]]
prompt = "p"
validators = ["missing", "plain", "onpath", "ok"]

[[mapping]]
prompt = "cmd/only"
validators = ["ok"]

[validators.missing]
run = "validators/missing.sh --flag"

[validators.plain]
run = "validators/plain.sh"

[validators.onpath]
run = "go test ./..."

[validators.ok]
run = "./validators/ok.sh"
`,
		files: map[string]string{
			"validators/plain.sh":          "echo not executable\n",
			"validators/ok.sh":             "#!/bin/sh\n",
			".claude/commands/cmd-only.md": "do it",
		},
		depth: Project,
		want: []string{
			`mappings.toml:2: mapping[0].prompt: prompt "p" has no file: none of src/prompts/p.md, .claude/commands/p.md, -/p.md, .claude/skills/p/SKILL.md exists (warning)`,
			"mappings.toml:10: validators.missing.run: cannot start: validators/missing.sh: no such file",
			"mappings.toml:13: validators.plain.run: cannot start: validators/plain.sh: not executable (chmod +x validators/plain.sh)",
		},
	}, {
		name: "loader problems and project problems together, by line",
		toml: `[[mapping]]
prompt = "p"
validators = ["ghost"]

[validators.unused]
file = "x"
regex = "("
`,
		want: []string{
			`mappings.toml:3: mapping[0].validators: validator "ghost" is not defined`,
			`mappings.toml:5: validators.unused: validator "unused" is not used by any mapping (warning)`,
			"mappings.toml:7: validators.unused.regex: does not compile: missing closing ): `(`",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			writeProjectFile(t, root, "mappings.toml", tt.toml)
			for p, content := range tt.files {
				writeProjectFile(t, root, p, content)
			}
			cfg, ps, err := Inspect(filepath.Join(root, "mappings.toml"), root, tt.depth)
			if err != nil {
				t.Fatal(err)
			}
			if cfg == nil {
				t.Fatal("Inspect returned no config for TOML that parses")
			}
			var got []string
			for _, p := range ps {
				s := p.Error()
				if p.Warning {
					s += " (warning)"
				}
				got = append(got, s)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestInspectSyntaxError(t *testing.T) {
	root := t.TempDir()
	writeProjectFile(t, root, "mappings.toml", "[settings\n")
	cfg, ps, err := Inspect(filepath.Join(root, "mappings.toml"), root, Project)
	if err != nil || cfg != nil || len(ps.Errors()) != 1 || ps[0].Line == 0 {
		t.Fatalf("Inspect = %v, %v, %v; want no config and one located error", cfg, ps, err)
	}
	if _, _, err := Inspect(filepath.Join(root, "none.toml"), root, Project); !os.IsNotExist(err) {
		t.Errorf("missing file: err %v, want not-exist", err)
	}
}

func writeProjectFile(t *testing.T, root, rel, content string) {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	mode := os.FileMode(0o644)
	if strings.HasPrefix(content, "#!") {
		mode = 0o755
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// TestInspectPromptLayouts: a prompt found under any of its Names has a
// file; a key in another of the client's spellings is named in the hint;
// a plugin's command has no file in the project and is not warned of.
func TestInspectPromptLayouts(t *testing.T) {
	root := t.TempDir()
	writeProjectFile(t, root, "mappings.toml", `[[mapping]]
prompt = "git/commit"
validators = ["v"]

[[mapping]]
prompt = "release-notes"
validators = ["v"]

[[mapping]]
prompt = "myplugin:review"
validators = ["v"]

[[mapping]]
prompt = "deploy-prod"
validators = ["v"]

[[mapping]]
prompt = "ops:restart"
validators = ["v"]

[[mapping]]
prompt = "nowhere/at/all"
validators = ["v"]

[validators.v]
file = "x"
`)
	for _, f := range []string{".claude/commands/git/commit.md", ".claude/skills/release-notes/SKILL.md",
		".claude/commands/deploy/prod.md", ".claude/commands/ops/restart.md"} {
		writeProjectFile(t, root, f, "do it\n")
	}
	_, ps, err := Inspect(filepath.Join(root, "mappings.toml"), root, Project)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.Error()+" | "+p.Hint)
	}
	want := []string{
		`mappings.toml:14: mapping[3].prompt: prompt "deploy-prod" has no file: none of src/prompts/deploy-prod.md, .claude/commands/deploy-prod.md, -/deploy-prod.md, .claude/skills/deploy-prod/SKILL.md exists | did you mean prompt = "deploy/prod"? .claude/commands/deploy/prod.md exists`,
		`mappings.toml:18: mapping[4].prompt: prompt "ops:restart" names a plugin's command, but .claude/commands/ops/restart.md is the project's /ops:restart | did you mean prompt = "ops/restart"? It is armed by a read of .claude/commands/ops/restart.md as well`,
		`mappings.toml:22: mapping[5].prompt: prompt "nowhere/at/all" has no file: none of src/prompts/nowhere/at/all.md, .claude/commands/nowhere/at/all.md, .claude/commands/nowhere-at-all.md, -/nowhere-at-all.md exists | it fires only on /nowhere:at:all or /nowhere-at-all; check the key's spelling and prompts_dir`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
