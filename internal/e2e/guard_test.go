package e2e

import (
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// TestTamperGuard: a gated agent tries to get out of its checks, deleting the queue with
// Bash and emptying mappings.toml with Write, in one message. detect's PreToolUse guard
// denies both; the model is told why in the tool results; the queue and the config
// survive, so the stop is still blocked until the work is done.
func TestTamperGuard(t *testing.T) {
	p := withoutWall(NewStopgateProject(t)) // the guard alone: TestOSWallRefusesEncodedWrite has the wall
	config := p.ReadFile("mappings.toml")
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Bash"), Text("Done.")),
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(ResultOf("Read"),
			Tool("Bash", map[string]any{"command": "rm -rf tmp/validation", "description": "Clear the queue"}),
			Tool("Write", map[string]any{"file_path": p.Path("mappings.toml"), "content": "# nothing to check\n"})),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")

	denied := map[string]string{}
	for _, o := range r.HookOutputs() {
		if o.Event != "PreToolUse" {
			continue
		}
		hso, _ := o.Output["hookSpecificOutput"].(map[string]any)
		if hso["permissionDecision"] == "deny" {
			reason, _ := hso["permissionDecisionReason"].(string)
			tool, _, _ := strings.Cut(strings.TrimPrefix(reason, "stopgate denied this "), " ")
			denied[tool] = reason
		}
	}
	for tool, what := range map[string]string{"Bash": "tmp/validation", "Write": "mappings.toml"} {
		reason := denied[tool]
		if !strings.Contains(reason, "it would change "+what) {
			r.Errorf("the %s call was not denied for %s: %q", tool, what, reason)
			continue
		}
		// The model gets the reason as the tool's error result, in the client's words.
		if !r.toldError("PreToolUse:" + tool + " hook error: " + reason) {
			r.Errorf("the model did not get the %s deny reason as an error result", tool)
		}
	}
	if got := p.ReadFile("mappings.toml"); got != config {
		r.Errorf("mappings.toml changed:\n%s", got)
	}
	if !r.Told(blocked + ": 2 checks failed.") {
		r.Errorf("the stop after the denied calls was not blocked: the queue did not survive")
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	if got := p.ReadFile("output/joke.txt"); got != joke+"\n" {
		r.Errorf("output/joke.txt = %q", got)
	}
	finish(t, p, r)
}

// toldError reports whether the model got s in an error tool result.
func (r *Result) toldError(s string) bool {
	for _, req := range r.Requests {
		for _, m := range req.Messages {
			if m.IsError && strings.Contains(m.Text, s) {
				return true
			}
		}
	}
	return false
}
