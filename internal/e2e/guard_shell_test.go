package e2e

import (
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// TestGuardDeniesFunctionForm: the agent empties mappings.toml through a shell function,
// a form only a real shell parser resolves (the path is the function's "$1").
func TestGuardDeniesFunctionForm(t *testing.T) {
	guardDeniesConfigWrite(t, `f(){ : > "$1"; }; f mappings.toml`)
}

// TestGuardDeniesEscapedAssignment: the agent deletes mappings.toml through a
// variable whose value bash unescapes (f=mapping\s.toml is mappings.toml to bash)
// and the guard's interpreter, unprepared, did not.
func TestGuardDeniesEscapedAssignment(t *testing.T) {
	guardDeniesConfigWrite(t, `f=mapping\s.toml; rm "$f"`)
}

// guardDeniesConfigWrite runs Claude Code through a session whose agent, after
// reading the prompt, runs cmd, which writes mappings.toml. The guard's dry run
// denies the Bash call before it runs; mappings.toml is unchanged, and the stop is
// still judged: blocked by the failing validator until the work is done.
func guardDeniesConfigWrite(t *testing.T, cmd string) {
	p := guarded(NewStopgateProject(t))
	config := p.ReadFile("mappings.toml")
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(ResultOf("Bash"), Text("Done.")),
		When(ResultOf("Read"), bash(cmd)),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")

	if !r.toldError("stopgate denied this Bash call: it would change mappings.toml") {
		r.Errorf("the model was not told the guard's reason; last request: %q", r.Requests[len(r.Requests)-1].Latest())
	}
	if got := p.ReadFile("mappings.toml"); got != config {
		r.Errorf("mappings.toml changed:\n%s", got)
	}
	if !r.Told(blocked) {
		r.Errorf("the stop after the denied call was not blocked")
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	if got := p.ReadFile("output/joke.txt"); got != joke+"\n" {
		r.Errorf("output/joke.txt = %q", got)
	}
	finish(t, p, r)
}
