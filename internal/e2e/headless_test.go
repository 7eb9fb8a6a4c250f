package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// TestHeadlessHaltVisible: the CI path of docs/install.md. In print mode
// (claude -p) Claude Code exits 0 and its result line says "success" with
// the model's "Done." even when the gate halted the session; its
// terminal_reason alone says "stop_hook_prevented", and stopReason is in no
// output. So the gate says the halt in a systemMessage too, which
// stream-json prints ("Stop says: …"), as it does an observe-mode finding;
// and `gate verdict SESSION`, the CI step, exits 1 naming either.
func TestHeadlessHaltVisible(t *testing.T) {
	for _, c := range []struct {
		name, settings, terminal, said, verdict string
	}{
		{"halt", `on_failure = "halt"`, "stop_hook_prevented",
			"Stop says: stopgate halted the session: 1 check failed", "halt: the last stop of session %s (*) was halted: failed never (exit status 1)"},
		{"observe", "on_failure = \"halt\"\nmode = \"observe\"", "completed",
			"Stop says: stopgate (observe mode) would have halted this stop: 1 check failed",
			"would-halt: the last stop of session %s (*) was let through by observe mode, but would have been halted: failed never (exit status 1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := doomedProject(t)
			p.WriteFile("mappings.toml", strings.Replace(p.ReadFile("mappings.toml"), "[settings]\n", "[settings]\n"+c.settings+"\n", 1))
			api := Start(t, Anthropic, Script{
				When(ResultOf("Read"), Text("Done.")),
				When(AtTurn(0), read(p, "src/prompts/doomed.md")),
			})
			r := p.Run(api, "Do src/prompts/doomed.md.")

			if r.Final.Subtype != "success" || r.Final.Result != "Done." || r.Final.TerminalReason != c.terminal {
				r.Errorf("result line %+v: want the client's success, Done. and %s (if it changed, docs/install.md's CI section is out of date)", r.Final, c.terminal)
			}
			said := ""
			for _, l := range r.Lines {
				if l["type"] == "system" && l["subtype"] == "informational" {
					s, _ := l["content"].(string)
					said += s + "\n"
				}
			}
			for _, want := range []string{c.said, `validator "never"`, "never good enough"} {
				if !strings.Contains(said, want) {
					r.Errorf("the stream-json output does not show it: no %q in its system messages:\n%s", want, said)
				}
			}
			verdictFails(t, p, r.SessionID, c.verdict)
		})
	}
}

// verdictFails runs gate verdict SESSION in p: it must exit 1 and say
// want, a format of the session whose * stands for the stop's time.
func verdictFails(t *testing.T, p *Project, session, want string) {
	t.Helper()
	cmd := exec.Command(filepath.Join(Stopgate(t), "gate"), "verdict", session)
	cmd.Dir = p.Dir
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("gate verdict %s: %v, want exit status 1\n%s", session, err, out)
	}
	head, tail, _ := strings.Cut(fmt.Sprintf(want, session), "*")
	if got := strings.TrimSpace(string(out)); !strings.HasPrefix(got, head) || !strings.HasSuffix(got, tail) {
		t.Errorf("gate verdict said %q, want %q", got, want)
	}
}
