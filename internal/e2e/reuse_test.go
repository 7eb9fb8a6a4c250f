package e2e

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/validator"
)

// TestReuseUnchangedPass: with the wall gate init writes (the sandbox up, the state
// dir denied) and validators confined, reuse is on by default. A slow run validator
// passes at the first stop while the joke checks fail; the agent fixes one thing and
// stops again: the slow check is not run again, and the block names it as unchanged
// since it passed; after the last fix the stop passes, the slow check still taken as
// unchanged. The outcome log records it reused, and the client's debug log shows the
// stops after the first shorter than the slow check.
func TestReuseUnchangedPass(t *testing.T) {
	if _, err := validator.Bwrap(); err != nil {
		t.Skipf("reuse by default needs the validators confined (make sandbox-tools): %v", err)
	}
	const slow = 3 * time.Second
	p := NewStopgateProject(t)
	cfg := p.ReadFile("mappings.toml")
	cfg = strings.Replace(cfg, `validators = ["joke-file", "joke-short"]`, `validators = ["joke-file", "joke-short", "slow"]`, 1)
	p.WriteFile("mappings.toml", cfg+"\n[validators.slow]\nrun = \"sleep 3\"\ninputs = [\"src/\"]\n")
	todo := Tool("Write", map[string]any{"file_path": p.Path("output/joke.txt"), "content": "TODO: a joke\n"})
	api := Start(t, Anthropic, Script{
		When(LastHas("unchanged since"), writeJoke(p)),
		When(LastHas(blocked), todo),
		When(ResultOf("Write"), Text("Done.")),
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")

	for _, want := range []string{
		blocked + ": 2 checks failed.",
		blocked + ": 1 check failed.",
		`✔ prompt "joke", validator "slow": unchanged since `,
	} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	var stops []time.Duration
	for _, h := range r.HookRuns() {
		if h.Event == "Stop" && settings.Program(h.Command) == hook.Gate {
			stops = append(stops, h.Duration)
		}
	}
	t.Logf("the gate's Stop runs, as the client logged them: %v", stops)
	if len(stops) != 3 {
		r.Errorf("gate ran %d times at Stop, want 3 (blocked, blocked, passed)", len(stops))
	} else if stops[0] < slow {
		r.Errorf("the first stop took %v: the slow check did not run", stops[0])
	}
	log := outcomes(p)
	if len(log) != 3 {
		r.Fatalf("%d decisions logged, want 3:\n%s", len(log), strings.Join(log, "\n"))
	}
	if strings.Contains(log[0], `"reused":true`) {
		r.Errorf("the first stop reused a check: %s", log[0])
	}
	for _, l := range log[1:] {
		if !strings.Contains(l, `{"name":"slow","prompts":["joke"],"passed":true,"result":"passed","duration_ms":0,"kind":"run","reused":true,`) {
			r.Errorf("the slow check was not reused: %s", l)
		}
	}
	finish(t, p, r)
}

// TestReuseIgnoredFileRuns: reuse is not steered by an ignore file. The slow check
// passes at the first stop (the joke is missing); the agent then writes, in one turn,
// a new folder whose own .gitignore is `*`, a file in it that breaks the check, and the
// joke. git lists nothing of the folder, so a fingerprint taken from git's list took
// the check as unchanged and the session completed. The fingerprint walks the tree:
// the check runs, fails naming the hidden file, and the session ends halted, not
// completed.
func TestReuseIgnoredFileRuns(t *testing.T) {
	if _, err := validator.Bwrap(); err != nil {
		t.Skipf("reuse by default needs the validators confined (make sandbox-tools): %v", err)
	}
	p := NewStopgateProject(t)
	if out, err := exec.Command("git", "-C", p.Path("."), "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v\n%s", err, out)
	}
	cfg := p.ReadFile("mappings.toml")
	cfg = strings.Replace(cfg, `validators = ["joke-file", "joke-short"]`, `validators = ["joke-file", "joke-short", "clean"]`, 1)
	p.WriteFile("mappings.toml", cfg+"\n[validators.clean]\nrun = \"sh validators/clean.sh\"\ninputs = [\"src/\"]\n")
	p.WriteFile("validators/clean.sh", "! grep -rl BROKEN src\n")
	api := Start(t, Anthropic, Script{
		When(LastHas("src/hidden/x.txt"), Text("I cannot fix that.")),
		When(LastHas(blocked),
			Tool("Write", map[string]any{"file_path": p.Path("src/hidden/.gitignore"), "content": "*\n"}),
			Tool("Write", map[string]any{"file_path": p.Path("src/hidden/x.txt"), "content": "BROKEN\n"}),
			writeJoke(p)),
		When(ResultOf("Write"), Text("Done.")),
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")

	if !r.Told(`validator \"clean\"`) && !r.Told(`validator "clean"`) {
		r.Errorf("the model was not told the clean check failed")
	}
	if !r.Told("src/hidden/x.txt") {
		r.Errorf("the model was not told of the hidden file")
	}
	if r.Final.TerminalReason == "completed" {
		r.Errorf("the session completed with the hidden file breaking the clean check")
	}
	for _, l := range outcomes(p)[1:] {
		if strings.Contains(l, `{"name":"clean","prompts":["joke"],"passed":true,"result":"passed","duration_ms":0,"kind":"run","reused":true,`) {
			r.Errorf("the clean check was reused: %s", l)
		}
	}
}

// TestReuseSparseFileAnswersInTime: hashing for reuse is bounded by the gate's answer
// deadline. With the Stop hook's timeout at 10 s, the agent leaves a sparse 400 GB file
// beside a file that breaks a check that passed before. Hashing it ran past the
// client's timeout: the client cancelled the hook and the session completed unjudged.
// The fingerprint gives up in time, the check runs and fails naming the file, and the
// session ends halted, not completed.
func TestReuseSparseFileAnswersInTime(t *testing.T) {
	if _, err := validator.Bwrap(); err != nil {
		t.Skipf("reuse by default needs the validators confined (make sandbox-tools): %v", err)
	}
	p := NewStopgateProject(t)
	s := p.ReadFile(".claude/settings.json")
	short := strings.ReplaceAll(strings.ReplaceAll(s, "--timeout 600", "--timeout 10"), `"timeout": 600`, `"timeout": 10`)
	if !strings.Contains(short, "--timeout 10") || !strings.Contains(short, `"timeout": 10`) {
		t.Fatalf("no Stop hook timeout of 600 to shorten in:\n%s", s)
	}
	p.WriteFile(".claude/settings.json", short)
	cfg := p.ReadFile("mappings.toml")
	cfg = strings.Replace(cfg, `validators = ["joke-file", "joke-short"]`, `validators = ["joke-file", "joke-short", "clean"]`, 1)
	p.WriteFile("mappings.toml", cfg+"\n[validators.clean]\nrun = \"sh validators/clean.sh\"\ninputs = [\"src/\"]\n")
	p.WriteFile("validators/clean.sh", "! grep -rl --exclude='*.bin' BROKEN src\n")
	api := Start(t, Anthropic, Script{
		When(LastHas("src/x.txt"), Text("I cannot fix that.")),
		When(LastHas(blocked),
			bash("truncate -s 400G src/big.bin"),
			Tool("Write", map[string]any{"file_path": p.Path("src/x.txt"), "content": "BROKEN\n"}),
			writeJoke(p)),
		When(ResultOf("Write"), Text("Done.")),
		When(ResultOf("Bash"), Text("Done.")),
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")

	if !r.Told("src/x.txt") {
		r.Errorf("the model was not told of the file that breaks the clean check")
	}
	if r.Final.TerminalReason == "completed" {
		r.Errorf("the session completed with src/x.txt breaking the clean check")
	}
}
