package e2e

import (
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

func bash(command string) Part {
	return Tool("Bash", map[string]any{"command": command, "description": "Run a command"})
}

// guarded registers the tamper guard as gate init does (a no-op when it already has).
func guarded(p *Project) *Project {
	p.Hook("PreToolUse", "Write|Edit|MultiEdit|NotebookEdit|Bash", `"$CLAUDE_PROJECT_DIR"/bin/detect`)
	return p
}

// outcomes returns the lines of the gate's outcome log.
func outcomes(p *Project) []string {
	return strings.Split(strings.TrimSpace(p.ReadFile(StateDir+"/outcomes.jsonl")), "\n")
}

// TestGuardDeniesTampering: the agent tries to delete the queue; the PreToolUse guard
// denies the Bash call and the model is told why; the entry survives, so the gate still
// judges the prompt from the queue, with no discrepancy to reconcile.
func TestGuardDeniesTampering(t *testing.T) {
	p := guarded(NewStopgateProject(t))
	api := Start(t, Anthropic, Script{
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(ResultOf("Bash"), writeJoke(p)),
		When(ResultOf("Read"), bash("rm -rf tmp/validation")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")

	if !r.Told("stopgate denied this Bash call: it would change tmp/validation with `rm -rf tmp/validation`") ||
		!r.Told("ask the user to change it") {
		r.Errorf("the model was not told the guard's reason; last request: %q", r.Requests[len(r.Requests)-1].Latest())
	}
	if p.ReadFile(StateDir+"/lock") != "" || !strings.Contains(p.ReadFile(StateDir+"/outcomes.jsonl"), `"prompts":["joke"]`) {
		r.Errorf("the queue did not survive: outcome log %q", p.ReadFile(StateDir+"/outcomes.jsonl"))
	}
	for _, line := range outcomes(p) {
		if strings.Contains(line, "reconciled") {
			r.Errorf("a discrepancy was logged although nothing was deleted: %s", line)
		}
	}
	finish(t, p, r)
}

// TestReconcileDeletedEntry: with the guard off (protect = []) the agent deletes its
// queue entry; the gate finds the Read in the real client's transcript, blocks the stop
// with the prompt's failures and a note, and logs the discrepancy; the fixed work passes.
func TestReconcileDeletedEntry(t *testing.T) {
	p := withoutWall(guarded(NewStopgateProject(t))) // the sandbox would refuse the deletion
	cfg := p.ReadFile("mappings.toml")
	p.WriteFile("mappings.toml", strings.Replace(cfg, "[settings]\n", "[settings]\nprotect = []\n", 1))
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(ResultOf("Bash"), Text("Done.")),
		When(ResultOf("Read"), bash("rm -rf tmp/validation/sessions")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")

	for _, want := range []string{
		`✘ prompt "joke", validator "joke-file"`,
		`Checked although missing from the queue in tmp/validation: prompt "joke" (the transcript shows it read)`,
	} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	logged := outcomes(p)
	if len(logged) != 2 || !strings.Contains(logged[0], `"decision":"block"`) || !strings.Contains(logged[1], `"decision":"pass"`) {
		r.Errorf("outcome log: %q", logged)
	}
	for _, line := range logged {
		if !strings.Contains(line, `"reconciled":[{"prompt":"joke","trigger":"read","path":"`+p.Path("src/prompts/joke.md")+`","transcript":"`+r.Transcript+`"`) {
			r.Errorf("no discrepancy logged in %s", line)
		}
	}
	finish(t, p, r)
}
