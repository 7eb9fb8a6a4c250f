package e2e

import (
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// layoutMappings adds to the example project's mappings.toml a mapping
// for each real prompt layout, each with its own output file to write.
const layoutMappings = `
[[mapping]]
prompt     = "git/commit"
validators = ["commit-msg"]

[[mapping]]
prompt     = "release-notes"
validators = ["notes"]

[[mapping]]
prompt     = "myplugin:review"
validators = ["review"]

[validators.commit-msg]
file = "output/commit.txt"
fix  = "Write the commit message to output/commit.txt."

[validators.notes]
file = "output/notes.txt"
fix  = "Write the release notes to output/notes.txt."

[validators.review]
file = "output/review.txt"
fix  = "Write the review to output/review.txt."
`

// layoutProject is the example project with a nested command, a skill and
// their mappings.
func layoutProject(t *testing.T) *Project {
	t.Helper()
	p := NewStopgateProject(t)
	p.WriteFile("mappings.toml", p.ReadFile("mappings.toml")+layoutMappings)
	p.WriteFile(".claude/commands/git/commit.md", "Write a commit message for the staged changes.\n")
	p.WriteFile(".claude/skills/release-notes/SKILL.md",
		"---\nname: release-notes\ndescription: Write the release notes.\n---\nWrite the release notes for this version.\n")
	return p
}

func write(p *Project, rel, content string) Part {
	return Tool("Write", map[string]any{"file_path": p.Path(rel), "content": content})
}

// layoutScript: the model answers at once, is blocked, writes the file the
// fix names, and stops again.
func layoutScript(first Part, p *Project, rel string) Script {
	return Script{
		When(LastHas(blocked), write(p, rel, "done\n")),
		When(ResultOf("Write"), Text("Wrote it.")),
		When(ResultOf("Skill"), Text("Done, in my head.")),
		When(AtTurn(0), first),
	}
}

// checkLayout checks that the model was told the prompt is armed, was
// blocked with the validator's fix, and then passed.
func checkLayout(t *testing.T, p *Project, r *Result, key, validator, fix, rel string) {
	t.Helper()
	for _, want := range []string{
		`the prompt "` + key + `" will be checked`,
		`✘ prompt "` + key + `", validator "` + validator + `"`,
		"Fix: " + fix,
	} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	if got := p.ReadFile(rel); got != "done\n" {
		r.Errorf("%s = %q", rel, got)
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	finish(t, p, r)
}

// TestNestedCommand: .claude/commands/git/commit.md run as /git:commit
// (UserPromptExpansion command_name "git:commit") arms prompt "git/commit".
func TestNestedCommand(t *testing.T) {
	p := layoutProject(t)
	p.Unregister("UserPromptSubmit", "detect") // the expansion alone must arm it
	api := Start(t, Anthropic, layoutScript(Text("Here is a message, in my head."), p, "output/commit.txt"))
	r := p.Run(api, "/git:commit")
	if !r.Told("Write a commit message for the staged changes") {
		r.Errorf("the command was not expanded")
	}
	checkLayout(t, p, r, "git/commit", "commit-msg", "Write the commit message to output/commit.txt.", "output/commit.txt")
}

// TestSkillBySlash: the skill .claude/skills/release-notes/SKILL.md typed
// as /release-notes arms prompt "release-notes".
func TestSkillBySlash(t *testing.T) {
	p := layoutProject(t)
	p.Unregister("UserPromptSubmit", "detect")
	api := Start(t, Anthropic, layoutScript(Text("Here are the notes, in my head."), p, "output/notes.txt"))
	r := p.Run(api, "/release-notes")
	if !r.Told("Base directory for this skill") {
		r.Errorf("the skill was not expanded")
	}
	checkLayout(t, p, r, "release-notes", "notes", "Write the release notes to output/notes.txt.", "output/notes.txt")
}

// TestSkillByTool: the model runs the same skill with the Skill tool.
func TestSkillByTool(t *testing.T) {
	p := layoutProject(t)
	p.AllowedTools = "Read Write Bash Skill"
	api := Start(t, Anthropic, layoutScript(Tool("Skill", map[string]any{"skill": "release-notes"}), p, "output/notes.txt"))
	r := p.Run(api, "Write the release notes.")
	checkLayout(t, p, r, "release-notes", "notes", "Write the release notes to output/notes.txt.", "output/notes.txt")
}

// TestPluginCommand: a plugin's command, /myplugin:review (command_source
// "plugin"), arms prompt "myplugin:review".
func TestPluginCommand(t *testing.T) {
	p := layoutProject(t)
	p.Unregister("UserPromptSubmit", "detect")
	p.WriteFile("plug/.claude-plugin/plugin.json", `{"name":"myplugin"}`+"\n")
	p.WriteFile("plug/commands/review.md", "Review the code.\n")
	api := Start(t, Anthropic, layoutScript(Text("Reviewed, in my head."), p, "output/review.txt"))
	r := p.run(api, "/myplugin:review", "--plugin-dir", p.Path("plug"))
	if !r.Told("Review the code.") {
		r.Errorf("the plugin's command was not expanded")
	}
	checkLayout(t, p, r, "myplugin:review", "review", "Write the review to output/review.txt.", "output/review.txt")
}

// TestReconcileNestedCommand: with detect told of no command at all, the
// gate finds /git:commit in the real transcript and judges it by the same
// names: the stop is blocked all the same.
func TestReconcileNestedCommand(t *testing.T) {
	p := layoutProject(t)
	p.Unregister("UserPromptSubmit", "detect")
	p.Unregister("UserPromptExpansion", "detect")
	api := Start(t, Anthropic, layoutScript(Text("Here is a message, in my head."), p, "output/commit.txt"))
	r := p.Run(api, "/git:commit")
	for _, want := range []string{
		`✘ prompt "git/commit", validator "commit-msg"`,
		`Checked although missing from the queue in tmp/validation: prompt "git/commit"`,
	} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	if r.Told("will be checked") {
		r.Errorf("detect armed the prompt; it was meant to see nothing")
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	finish(t, p, r)
}
