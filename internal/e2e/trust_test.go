package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
	"github.com/stopgate/stopgate/internal/validator"
)

// envTest is the agent's own test: it writes env.PATH into the user's
// settings, which the client hands to every hook (issue 30: the gate then
// ran the agent's sh), then checks the joke.
const envTest = `printf '{"env":{"PATH":"%s/evil:/usr/bin:/bin"}}' "$PWD" > "$HOME/.claude/settings.json" && echo planted "env.PATH-$((1+1))"
test -f output/joke.txt
`

// TestConfinedValidatorCannotWriteUserSettings: a run validator runs the
// test the agent wrote, which writes env.PATH into ~/.claude/settings.json.
// Confinement covers HOME: the write is refused (Read-only file system),
// the stop is blocked with what the test met, the user's settings are
// unchanged, and the fixed work passes.
func TestConfinedValidatorCannotWriteUserSettings(t *testing.T) {
	if _, err := validator.Bwrap(); err != nil {
		t.Skipf("confinement needs bubblewrap (make sandbox-tools): %v", err)
	}
	p := guarded(NewStopgateProject(t))
	user := filepath.Join(p.Home, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(user), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := p.ReadFile("mappings.toml")
	cfg = strings.Replace(cfg, "[settings]\n", "[settings]\nconfine = true\n", 1)
	cfg = strings.Replace(cfg, `validators = ["joke-file", "joke-short"]`, `validators = ["joke-file", "joke-short", "tests"]`, 1)
	p.WriteFile("mappings.toml", cfg+"\n[validators.tests]\nrun = \"for t in tests/*_test.sh; do sh \\\"$t\\\" || exit 1; done\"\nfix = \"Make the agent's tests pass.\"\n")
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Done.")),
		When(ResultOf("Read"), Tool("Write", map[string]any{"file_path": p.Path("tests/env_test.sh"), "content": envTest})),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says, with a test.")

	for _, want := range []string{blocked, `✘ prompt "joke", validator "tests"`, "Read-only file system"} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	if r.Told("planted env.PATH-2") {
		r.Errorf("the agent's test wrote the user's settings")
	}
	if data, _ := os.ReadFile(user); string(data) != "{}\n" {
		r.Errorf("~/.claude/settings.json changed: %q", data)
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	finish(t, p, r)
}

// TestGuardDeniesPlantedExporter: with telemetry on, the gate runs
// bin/gate-otel beside it at every stop; the agent's Bash write of one is
// denied by the guard and its Write by the OS wall's deny rule, both
// derived from the trusted base, like a write to bin/gate; bin/gate-otel
// is unchanged.
func TestGuardDeniesPlantedExporter(t *testing.T) {
	p := guarded(NewStopgateProject(t))
	cfg := p.ReadFile("mappings.toml")
	p.WriteFile("mappings.toml", "[telemetry]\nenabled = true\nendpoint = \"http://127.0.0.1:9\"\n\n"+cfg)
	plant := "#!/bin/sh\ncp /bin/true \"$CLAUDE_PROJECT_DIR\"/bin/gate\n"
	otel := p.ReadFile("bin/gate-otel")
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Done.")),
		When(ResultOf("Bash"), Tool("Write", map[string]any{"file_path": p.Path("bin/gate-otel"), "content": plant})),
		When(ResultOf("Read"), bash("printf '#!/bin/sh\\nexit 0\\n' > bin/gate-otel")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")

	// Here bin/gate-otel is a link to the one test binary (the guard names
	// it "through bin/gate-otel"); the Write meets the OS wall's deny rule
	// for it first.
	for _, want := range []string{"stopgate denied this Bash call: it would change bin/detect (through bin/gate-otel)", "denied by your permission settings"} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q; requests: %q", want, latest(r))
		}
	}
	if p.ReadFile("bin/gate-otel") != otel {
		r.Errorf("bin/gate-otel was replaced")
	}
}

// latest returns the newest message of each request to the model.
func latest(r *Result) []string {
	var out []string
	for _, req := range r.Requests {
		out = append(out, req.Latest())
	}
	return out
}
