package e2e

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// cleanConfig maps a prompt to a validator that runs `make clean test` the way many
// projects do: clean removes tmp/, and with it the state dir. Unconfined: confinement
// would keep the state dir read-only to it; this is the gate's own defence where
// bubblewrap is missing.
const cleanConfig = `[settings]
max_blocks = 3
confine    = false

[[mapping]]
prompt     = "release"
validators = ["clean-test"]

[validators.clean-test]
run = "rm -rf tmp; test -f output/done.txt"
fix = "Write output/done.txt once the release is done."
`

// TestValidatorDeletesStateDir: a failing validator that deletes the state dir still
// blocks the stop, and the agent gets the fix; after the fix the stop passes.
func TestValidatorDeletesStateDir(t *testing.T) {
	p := NewStopgateProject(t)
	p.WriteFile("mappings.toml", cleanConfig)
	p.WriteFile("src/prompts/release.md", "Cut the release, then write output/done.txt.\n")
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), Tool("Write", map[string]any{"file_path": p.Path("output/done.txt"), "content": "done\n"})),
		When(ResultOf("Write"), Text("Done now.")),
		When(ResultOf("Read"), Text("Released.")),
		When(AtTurn(0), read(p, "src/prompts/release.md")),
	})
	r := p.Run(api, "Do the release as src/prompts/release.md says.")

	for _, want := range []string{
		blocked + ": 1 check failed.",
		`✘ prompt "release", validator "clean-test"`,
		"Fix: Write output/done.txt once the release is done.",
	} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	finish(t, p, r)
}

// TestHeldLockHalts: another process holds the state dir's lock (an agent's
// `flock -s tmp/validation/lock sleep 3600 &`). The stop halts within the lock's
// deadline, naming the lock, and the user sees it.
func TestHeldLockHalts(t *testing.T) {
	p := NewStopgateProject(t)
	p.Env = append(p.Env, "STOPGATE_LOCK_WAIT=1s")
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) not installed")
	}
	api := Start(t, Anthropic, Script{
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	// Held from the start: detect cannot arm the Read (it says so on stderr), the gate
	// finds the read in the transcript, judges it, and cannot record its block.
	p.WriteFile("tmp/validation/.keep", "")
	holder := exec.Command("flock", "--no-fork", "-s", p.Path("tmp/validation/lock"), "sleep", "120")
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { holder.Process.Kill(); holder.Wait() })
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if data, _ := os.ReadFile("/proc/locks"); strings.Contains(string(data), " "+strconv.Itoa(holder.Process.Pid)+" ") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lock holder never took the lock")
		}
	}
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")

	if r.Final.TerminalReason != "stop_hook_prevented" {
		r.Errorf("terminal_reason %q, want stop_hook_prevented (the halt)", r.Final.TerminalReason)
	}
	halted := r.Halt()
	if !strings.Contains(halted, "tmp/validation/lock is held by pid "+strconv.Itoa(holder.Process.Pid)) || !strings.Contains(halted, "not free within 1s") {
		r.Errorf("the halt does not name the held lock: %q", halted)
	}
	if r.Told(blocked) {
		r.Errorf("the model was told a block; the user should see a halt")
	}
}
