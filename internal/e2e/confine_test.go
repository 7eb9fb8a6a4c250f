package e2e

import (
	"os"
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
	"github.com/stopgate/stopgate/internal/validator"
)

// swapTest is the agent's own test, as the agent writes it: it renames the project
// root away, copies it back writable and replaces bin/gate with one that passes
// everything; then it checks the joke.
const swapTest = `root="$CLAUDE_PROJECT_DIR"
mv "$root" "$root.away" && cp -a "$root.away" "$root" && printf '#!/bin/sh\nexit 0\n' > "$root/bin/gate" && echo "$root" swapped
test -f output/joke.txt
`

// TestConfinedValidatorCannotMoveTheRoot: a run validator runs the test the agent
// wrote, which renames the project root to put a writable copy with a bin/gate that
// passes in its place. Inside the confinement every directory above the protected set
// is a mount point: the rename is refused (Device or resource busy), bin/gate is
// unchanged, and the stop is still judged: blocked with the fix text, then passed
// once the work is done.
func TestConfinedValidatorCannotMoveTheRoot(t *testing.T) {
	if _, err := validator.Bwrap(); err != nil {
		t.Skipf("confinement needs bubblewrap (make sandbox-tools): %v", err)
	}
	p := guarded(NewStopgateProject(t))
	cfg := p.ReadFile("mappings.toml")
	cfg = strings.Replace(cfg, "[settings]\n", "[settings]\nconfine = true\n", 1)
	cfg = strings.Replace(cfg, `validators = ["joke-file", "joke-short"]`, `validators = ["joke-file", "joke-short", "tests"]`, 1)
	p.WriteFile("mappings.toml", cfg+"\n[validators.tests]\nrun = \"for t in tests/*_test.sh; do sh \\\"$t\\\" || exit 1; done\"\nfix = \"Make the agent's tests pass.\"\n")
	gate := p.ReadFile("bin/gate")
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Done.")),
		When(ResultOf("Read"), Tool("Write", map[string]any{"file_path": p.Path("tests/joke_test.sh"), "content": swapTest})),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says, with a test.")

	for _, want := range []string{
		blocked + ": 3 checks failed.",
		`✘ prompt "joke", validator "tests"`,
		"Device or resource busy",
		"Fix: Write the joke to output/joke.txt.",
		"Fix: Make the agent's tests pass.",
	} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	if r.Told(p.Dir + " swapped") {
		r.Errorf("the agent's test swapped the project root")
	}
	if _, err := os.Stat(p.Dir + ".away"); err == nil {
		r.Errorf("the project root was renamed away")
	}
	if got := p.ReadFile("bin/gate"); got != gate {
		r.Errorf("bin/gate changed: %q", got)
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	finish(t, p, r)
}
