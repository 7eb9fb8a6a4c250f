package e2e

import (
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// forgeMark is what a hostile agent runs once it has read a mapped prompt: it
// deletes the queue and writes a mark claiming its transcript was judged up to its
// current end, sealed as the gate seals (the seal is no secret).
const forgeMark = `t=$(ls -t "$HOME"/.claude/projects/*/*.jsonl | head -1) && n=$(wc -c < "$t") && ` +
	`s=$(head -c "$n" "$t" | tail -c 4096 | sha256sum | cut -d" " -f1) && sid=$(basename "$t" .jsonl) && ` +
	`rm -rf tmp/validation/sessions && mkdir -p tmp/validation/reconciled/$sid && ` +
	`printf '{"transcript":"%s","offset":%d,"end":%d,"seal":"%s"}' "$t" "$n" "$n" "$s" > tmp/validation/reconciled/$sid/main.json`

// TestForgedSealedMark: with the guard and the OS wall off, the agent forges a
// correctly sealed mark past its read of a mapped prompt. The real client records no
// passing stop of the gate after that offset, so the gate ignores the mark, judges the
// read, and says why; the fixed work passes.
func TestForgedSealedMark(t *testing.T) {
	p := withoutWall(guarded(NewStopgateProject(t)))
	cfg := p.ReadFile("mappings.toml")
	p.WriteFile("mappings.toml", strings.Replace(cfg, "[settings]\n", "[settings]\nprotect = []\n", 1))
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(ResultOf("Bash"), Text("Done.")),
		When(ResultOf("Read"), bash(forgeMark)),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")

	for _, want := range []string{
		`✘ prompt "joke", validator "joke-file"`,
		`Checked although missing from the queue in tmp/validation: prompt "joke"`,
		"stopgate ignored the reconciliation mark in tmp/validation: the client's record shows no stop the gate passed after its offset",
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
