package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
	"github.com/stopgate/stopgate/internal/example"
)

// TestInitRegistersWorkingHooks: the hooks `gate init` writes into
// .claude/settings.json are ones the real client runs: a mapped read is
// armed, the stop is blocked with the fix, and after the fix it passes.
func TestInitRegistersWorkingHooks(t *testing.T) {
	p := initFresh(t)

	r := playJoke(t, p)
	for _, want := range []string{`the prompt "joke" will be checked`, blocked + ": 2 checks failed."} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	// Timing is the other scenarios' claim: on a loaded machine this one
	// checks only the outcome.
	if r.Final.TerminalReason != "completed" {
		r.Errorf("terminal_reason %q, want completed", r.Final.TerminalReason)
	}
	if pending := p.Pending(); len(pending) > 0 {
		r.Errorf("entries left pending: %v", pending)
	}
}

// initFresh is a project registered by this build's gate init alone.
func initFresh(t *testing.T) *Project {
	p := NewStopgateProject(t)
	// NewStopgateProject ran gate init already: start again from a project with no
	// settings, so this run's registration is the one under test.
	if err := os.Remove(p.Path(".claude/settings.json")); err != nil {
		t.Fatal(err)
	}
	// The real gate, not the capturing wrapper in the project's bin/.
	cmd := exec.Command(filepath.Join(Stopgate(t), "gate"), "init")
	cmd.Dir = p.Dir
	cmd.Env = withoutProjectDir(os.Environ())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gate init: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), ".claude/settings.json: registered") {
		t.Fatalf("gate init registered nothing:\n%s", out)
	}
	return p
}

func withoutProjectDir(env []string) []string {
	var out []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "CLAUDE_PROJECT_DIR=") {
			out = append(out, kv)
		}
	}
	return out
}

// TestInitPluginLoads: the plugin `gate init --plugin DIR` writes is one
// `claude --plugin-dir DIR` loads: its hooks, under ${CLAUDE_PLUGIN_ROOT},
// arm the prompt and block the stop in a project with no hooks of its own.
func TestInitPluginLoads(t *testing.T) {
	p := NewStopgateProject(t)
	p.hooks = map[string][]hookGroup{}
	p.WriteFile(".claude/settings.json", "{}\n") // no hooks: only the plugin's

	plugin := t.TempDir()
	cmd := exec.Command(filepath.Join(Stopgate(t), "gate"), "init", "--plugin", plugin)
	cmd.Dir = p.Dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gate init --plugin: %v\n%s", err, out)
	}
	if err := example.CopyTree(Stopgate(t), filepath.Join(plugin, "bin")); err != nil {
		t.Fatal(err)
	}

	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	run := exec.Command(Claude(t), "-p", "Tell a joke as src/prompts/joke.md says.",
		"--output-format", "stream-json", "--verbose", "--allowedTools", "Read Write Bash",
		"--plugin-dir", plugin)
	run.Dir = p.Dir
	run.Env = p.env(api.URL())
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("claude --plugin-dir: %v\n%s", err, out)
	}
	told := func(s string) bool {
		for _, req := range api.Requests() {
			if !req.Side && req.Has(s) {
				return true
			}
		}
		return false
	}
	for _, want := range []string{`the prompt "joke" will be checked`, blocked + ": 2 checks failed."} {
		if !told(want) {
			t.Errorf("the model was not told %q\n%s", want, out)
		}
	}
	if got := p.ReadFile("output/joke.txt"); got != joke+"\n" {
		t.Errorf("output/joke.txt = %q", got)
	}
	if pending := p.Pending(); len(pending) > 0 {
		t.Errorf("entries left pending: %v", pending)
	}
}

// TestInitBashReadArms: with the hooks gate init registers (PostToolUse
// Read|Skill|Bash), the real client's Bash `cd dir && cat` of a mapped prompt
// arms it, resolved by the guard's dry run, and the stop is blocked. The
// client's PostToolUse names the directory the command ended in (src/prompts):
// detect reads the command from the root as well.
func TestInitBashReadArms(t *testing.T) {
	p := initFresh(t)
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(ResultOf("Bash"), Text("Done.")),
		When(AtTurn(0), bash("cd src/prompts && cat joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")
	if !r.Told(blocked) {
		r.Errorf("the stop was not blocked: the Bash read did not arm")
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
}

// TestConfigChangeRefused: on the real client, a change to the user's settings in the
// middle of a session that switches every hook off (disableAllHooks) is refused by the
// ConfigChange hook gate init registers: the session keeps its hooks, and the stop after
// the change is still judged.
func TestConfigChangeRefused(t *testing.T) {
	p := initFresh(t)
	changed := false
	change := func(r *Request) []Part { // the user's settings change under the session
		if !ResultOf("Read")(r) {
			return nil
		}
		if !changed {
			changed = true
			os.MkdirAll(filepath.Join(p.Home, ".claude"), 0o755)
			if err := os.WriteFile(filepath.Join(p.Home, ".claude", "settings.json"), []byte(`{"disableAllHooks": true}`+"\n"), 0o644); err != nil {
				t.Error(err)
			}
		}
		return []Part{bash("sleep 3")}
	}
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), Text("Blocked, as expected.")),
		When(ResultOf("Bash"), Text("Done.")),
		change,
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")
	if !strings.Contains(r.Debug, "ConfigChange hook blocked change to "+filepath.Join(p.Home, ".claude", "settings.json")) {
		r.Errorf("the client did not report the change refused by the ConfigChange hook")
	}
	if n := gateRuns(r, "Stop"); n < 1 || !r.Told(blocked) {
		r.Errorf("the stop after the change was not judged and blocked (gate ran %d times at Stop)", n)
	}
}
