package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
	"github.com/stopgate/stopgate/internal/validator"
)

// evil is `: > mappings.toml`, base64-encoded: text no analysis of the command
// can read, so only the OS wall can refuse it.
const evil = "echo OiA+IG1hcHBpbmdzLnRvbWwK | base64 -d | sh"

// TestOSWallRefusesEncodedWrite: with the sandbox settings gate init writes, the
// agent's Bash runs an encoded truncation of mappings.toml; the tamper guard cannot
// read it, the client's OS sandbox refuses it ("Read-only file system"), mappings.toml
// is unchanged, and the stop is still judged: blocked, then passed after the fix.
func TestOSWallRefusesEncodedWrite(t *testing.T) {
	if _, err := validator.Bwrap(); err != nil {
		t.Skipf("the client's OS sandbox needs bubblewrap (make sandbox-tools): %v", err)
	}
	p := NewStopgateProject(t)
	if !strings.Contains(p.InitOutput, "+ sandbox.enabled") || !strings.Contains(p.InitOutput, "+ Edit(/mappings.toml)") {
		t.Fatalf("gate init wrote no OS wall:\n%s", p.InitOutput)
	}
	before := p.ReadFile("mappings.toml")
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(ResultOf("Bash"), Text("Done.")),
		When(ResultOf("Read"), bash(evil)),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")

	if !r.Told("Read-only file system") {
		r.Errorf("the sandbox did not refuse the write; last request: %q", r.Requests[len(r.Requests)-1].Latest())
	}
	if r.Told("stopgate denied this Bash call") {
		r.Errorf("the guard denied the call: this scenario must reach the OS wall")
	}
	if got := p.ReadFile("mappings.toml"); got != before {
		r.Errorf("mappings.toml changed:\n%s", got)
	}
	if !r.Told(blocked + ": 2 checks failed.") {
		r.Errorf("the stop was not judged: the model was not blocked")
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	if r.Final.TerminalReason != "completed" {
		r.Errorf("terminal_reason %q, want completed", r.Final.TerminalReason)
	}
	if pending := p.Pending(); len(pending) > 0 {
		r.Errorf("entries left pending: %v", pending)
	}
}

// withoutWall takes the OS wall gate init wrote out of the project's settings, for a
// scenario about the layers behind it (the guard, reconciliation): with the wall up,
// the client's own deny rules and sandbox refuse the agent's writes first.
func withoutWall(p *Project) *Project {
	p.t.Helper()
	var settings map[string]any
	if err := json.Unmarshal([]byte(p.ReadFile(".claude/settings.json")), &settings); err != nil {
		p.t.Fatalf("e2e: .claude/settings.json: %v", err)
	}
	delete(settings, "sandbox")
	delete(settings, "permissions")
	data, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		p.t.Fatalf("e2e: %v", err)
	}
	p.WriteFile(".claude/settings.json", string(data)+"\n")
	return p
}
