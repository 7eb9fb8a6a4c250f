package e2e

import (
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// TestJudgeBlocksThenPasses: a judge validator's model (a second fake Messages API on
// loopback, its key in the hooks' environment) reads the changelog the agent wrote since
// the prompt was armed. The real client's first stop is blocked with the judge's reason
// and its quote from the evidence; the agent rewrites the entry, the judge is asked again
// with the new evidence and passes, and the session completes.
func TestJudgeBlocksThenPasses(t *testing.T) {
	p := NewStopgateProject(t)
	p.WriteFile("src/prompts/release.md", "# Release\n\nAdd a CHANGELOG.md entry for the retry change.\n")
	p.WriteFile("CHANGELOG.md", "# Changelog\n")
	judge := Start(t, Anthropic, Script{
		When(LastHas("retried up to three times"), Text(`{"verdict": "pass", "reasons": ["The entry says what changed for users."], "quotes": []}`)),
		When(Always, Text(`{"verdict": "fail", "reasons": ["The entry does not say what changed for users."], "quotes": ["- Fixed stuff"]}`)),
	})
	judge.Sides = true // the judge offers the model no tools
	p.Env = append(p.Env, "JUDGE_KEY=sk-judge-fake-e2e")
	appendFile(p, "mappings.toml", `
[[mapping]]
prompt = "release"
validators = ["changelog"]

[validators.changelog]
judge = "The CHANGELOG.md entry says what changed for users, in their words."
evidence = ["changed"]
api = "anthropic"
endpoint = "`+judge.URL()+`/v1/messages"
model = "judge-model"
key_env = "JUDGE_KEY"
`)
	write := func(entry string) Part {
		return Tool("Write", map[string]any{"file_path": p.Path("CHANGELOG.md"), "content": "# Changelog\n" + entry + "\n"})
	}
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), write("- Failed requests are now retried up to three times.")),
		When(ResultOf("Write"), Text("Done.")),
		When(ResultOf("Read"), write("- Fixed stuff")),
		When(AtTurn(0), read(p, "src/prompts/release.md")),
	})
	r := p.Run(api, "Do src/prompts/release.md.")

	for _, want := range []string{
		blocked + ": 1 check failed.",
		`✘ prompt "release", validator "changelog"`,
		"| judge (judge-model): fail",
		"| - The entry does not say what changed for users.",
		"|   > - Fixed stuff",
	} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	if r.Told("judge unavailable") || r.Told("sk-judge-fake") {
		r.Errorf("the model was told of an unavailable judge or its key")
	}
	asked := judge.Requests()
	if len(asked) != 2 {
		t.Fatalf("the judge was asked %d times, want 2 (the fail, then the pass)", len(asked))
	}
	if !asked[0].Has("- Fixed stuff") || !asked[1].Has("retried up to three times") || asked[0].Has("Do src/prompts/release.md.") {
		r.Errorf("the judge was not sent the changelog as it was at each stop, or was sent the transcript")
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	if log := p.ReadFile("tmp/validation/outcomes.jsonl"); !strings.Contains(log, `"kind":"judge"`) {
		r.Errorf("the outcome log has no judge check:\n%s", log)
	}
	finish(t, p, r)
}
