package e2e

import (
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// slowConfig maps a prompt to a validator whose own timeout (60s) outlasts the hook
// timeout the gate is registered with below (6s): it hangs until the agent has done the
// work.
const slowConfig = `[settings]
max_blocks = 3

[[mapping]]
prompt     = "slow"
validators = ["slow"]

[validators.slow]
run     = "validators/slow.sh"
timeout = "60s"
fix     = "Write output/fast.txt."
`

// TestClientDeadline: the real client kills a Stop hook at its registered timeout and
// then lets the stop pass. With the Stop hooks registered at 6 s (--timeout 6, as gate
// init writes it for the timeout it registers), the gate kills the validator still
// running 3 s in and blocks, naming it as timed out: the client never cancels the gate.
// After the fix the validator answers at once and the stop passes.
func TestClientDeadline(t *testing.T) {
	p := NewStopgateProject(t)
	p.WriteFile("mappings.toml", slowConfig)
	p.WriteFile("src/prompts/slow.md", "Do the slow thing, then write output/fast.txt.\n")
	p.WriteFile("validators/slow.sh", "#!/bin/sh\n[ -f output/fast.txt ] || sleep 120\n")
	settings := p.ReadFile(".claude/settings.json")
	settings = strings.ReplaceAll(settings, "--timeout 600", "--timeout 6") // the gate's flag, in the launcher
	settings = strings.ReplaceAll(settings, `"timeout": 600`, `"timeout": 6`)
	p.WriteFile(".claude/settings.json", settings)

	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), Tool("Write", map[string]any{"file_path": p.Path("output/fast.txt"), "content": "fast\n"})),
		When(ResultOf("Write"), Text("Done now.")),
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/slow.md")),
	})
	r := p.Run(api, "Do src/prompts/slow.md.")

	for _, want := range []string{
		`✘ prompt "slow", validator "slow": timed out after`,
		"it was still running when stopgate had to answer, 3s before the client's hook timeout of 6s",
	} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	for _, h := range r.HookRuns() {
		if h.Cancelled {
			r.Errorf("the client cancelled %v", h)
		}
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	finish(t, p, r)
}
