package e2e

import (
	"os"
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// notInstalled is what the stop says on a machine without stopgate's
// programs, as gate init registered it: what is missing, and the command.
const notInstalled = "stopgate is not installed on this machine: bin/gate is missing or cannot run"

// TestNotInstalledHalts: a teammate's fresh clone of a project registered for
// stopgate by gate init, on a machine that never installed it: the settings are
// committed, bin/ is not. The first stop halts with the command that installs it,
// and the session does not end a silent "success".
func TestNotInstalledHalts(t *testing.T) {
	p := NewStopgateProject(t)
	if err := os.RemoveAll(p.Path("bin")); err != nil {
		t.Fatal(err)
	}
	api := Start(t, Anthropic, Script{
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")
	haltedNotInstalled(r)
}

// TestCannotRunHalts: bin/gate is there and executable, but built for
// another platform, so the kernel will not start it (the shell's exit
// 126). The launcher ran it with exec, which left 126 as the hook's
// answer, a non-blocking error: the armed stop passed. Now the stop halts,
// as where the program is missing.
func TestCannotRunHalts(t *testing.T) {
	p := NewStopgateProject(t)
	// An ELF header for a machine no kernel runs (e_machine 0xffff).
	foreign := append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 57)...)
	foreign[16], foreign[18], foreign[19] = 2, 0xff, 0xff
	// bin/gate is a link to the capturing wrapper the other programs share.
	if err := os.Remove(p.Path("bin/gate")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.Path("bin/gate"), foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	api := Start(t, Anthropic, Script{
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")
	if want := `the prompt "joke" will be checked`; !r.Told(want) {
		r.Errorf("the model was not told %q: nothing was armed", want)
	}
	haltedNotInstalled(r)
}

// haltedNotInstalled checks that the run's stop halted with what is
// missing and the command that installs it, in the answer and the record.
func haltedNotInstalled(r *Result) {
	if r.Final.TerminalReason != "stop_hook_prevented" {
		r.Errorf("terminal_reason %q, want stop_hook_prevented (the halt)", r.Final.TerminalReason)
	}
	halted := false
	for _, o := range r.HookOutputs() {
		reason, _ := o.Output["stopReason"].(string)
		halted = halted || o.Event == "Stop" && o.Output["continue"] == false &&
			strings.Contains(reason, notInstalled) && strings.Contains(reason, "Install it with: make install PREFIX=.")
	}
	if !halted {
		r.Errorf("no Stop hook halted saying what is missing and how to install it")
	}
	// claude -p still says "success" on its result line, beside the terminal
	// reason above (gate verdict is the CI's question); the session's record
	// keeps the reason the user was shown.
	if data, err := os.ReadFile(r.Transcript); err != nil || !strings.Contains(string(data), notInstalled) {
		r.Errorf("the transcript does not record the halt's reason (%v)", err)
	}
}
