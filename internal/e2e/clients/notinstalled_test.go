package clients

import (
	"os"
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// Gemini CLI on a fresh clone of a project registered by gate init --client gemini,
// on a machine that never installed stopgate (bin/ is not committed): the first
// AfterAgent halts, and Gemini shows the user what is missing and the command that
// installs it, instead of ending quietly with the model's "Done.".
func TestGeminiNotInstalledHalts(t *testing.T) {
	p := NewProject(t, "gemini")
	if err := os.RemoveAll(p.Path("bin")); err != nil {
		t.Fatal(err)
	}
	srv := Start(t, Gemini, Script{
		When(ResultOf("read_file"), Text("Done.")),
		When(AtTurn(0), Tool("read_file", map[string]any{"file_path": p.Path("src/prompts/joke.md")})),
	})
	r := gemini(t, p, srv, "Follow src/prompts/joke.md")
	if testing.Verbose() {
		t.Logf("exit: %v\nstdout: %s\nstderr: %s", r.Err, r.Stdout, tail(r.Stderr, 2000))
	}
	// Gemini lists the project's hooks, launcher text and all, before it runs: the
	// halt is the line it prints when the stop ends the session.
	halt := "Agent execution stopped: stopgate is not installed on this machine: bin/gate is missing or cannot run, so nothing this session did was checked. Install it with: make install PREFIX=. "
	if !strings.Contains(r.Stdout+r.Stderr, halt) {
		t.Errorf("Gemini does not show the halt %q", halt)
	}
	if len(r.Inputs) != 0 {
		t.Errorf("%d hook inputs reached a stopgate program; none is installed", len(r.Inputs))
	}
}
