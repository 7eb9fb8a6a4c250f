package e2e

import (
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// TestAddedSkipFedBack: the agent reads a prompt whose mapping forbids added skips,
// adds t.Skip("flaky") to a test that existed when the prompt was armed, and stops: the
// real client's stop is blocked with the file, the line and the skip; the agent removes
// it and the next stop passes. The Stop hook carries Claude Code's statusMessage.
func TestAddedSkipFedBack(t *testing.T) {
	p := NewStopgateProject(t)
	p.WriteFile("src/prompts/fix.md", "# Fix the bug\n\nFix it without skipping tests.\n")
	before := "package pkg\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {\n\tif 1+1 != 2 {\n\t\tt.Fatal(\"math\")\n\t}\n}\n"
	skipped := strings.Replace(before, "{\n\tif", "{\n\tt.Skip(\"flaky\")\n\tif", 1)
	p.WriteFile("pkg/a_test.go", before)
	appendFile(p, "mappings.toml", `
[[mapping]]
prompt = "fix"
validators = ["no-skip"]

[validators.no-skip]
added_lacks = 't\.Skip\('
in = ["**/*_test.go"]
fix = "Fix the test instead of skipping it."
`)
	write := func(content string) Part {
		return Tool("Write", map[string]any{"file_path": p.Path("pkg/a_test.go"), "content": content})
	}
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), write(before)),
		When(ResultOf("Write"), Text("Done.")),
		When(ResultOf("Read"), write(skipped)),
		When(AtTurn(0), read(p, "src/prompts/fix.md")),
	})
	r := p.Run(api, "Do src/prompts/fix.md.")

	for _, want := range []string{
		`the prompt "fix" will be checked`, // the announcement
		blocked + ": 1 check failed.",
		`✘ prompt "fix", validator "no-skip"`,
		`| pkg/a_test.go:6: added line matches t\.Skip\(: t.Skip("flaky")`,
		"Fix: Fix the test instead of skipping it.",
	} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	if !strings.Contains(p.ReadFile(".claude/settings.json"), `"statusMessage": "stopgate: checking`) {
		r.Errorf("the Stop hook has no statusMessage")
	}
	finish(t, p, r)
}
