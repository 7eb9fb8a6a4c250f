package e2e

import (
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
// stream-json prints ("Stop says: …"), and `gate verdict SESSION`, the CI
// step, exits 1 naming the halt.
func TestHeadlessHaltVisible(t *testing.T) {
	p := doomedProject(t)
	p.WriteFile("mappings.toml", strings.Replace(p.ReadFile("mappings.toml"), "[settings]\n", "[settings]\non_failure = \"halt\"\n", 1))
	api := Start(t, Anthropic, Script{
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/doomed.md")),
	})
	r := p.Run(api, "Do src/prompts/doomed.md.")

	if r.Final.Subtype != "success" || r.Final.Result != "Done." || r.Final.TerminalReason != "stop_hook_prevented" {
		r.Errorf("result line %+v: want the client's success, Done. and stop_hook_prevented (if it changed, docs/install.md's CI section is out of date)", r.Final)
	}
	said := ""
	for _, l := range r.Lines {
		if l["type"] == "system" && l["subtype"] == "informational" {
			s, _ := l["content"].(string)
			said += s + "\n"
		}
	}
	for _, want := range []string{"Stop says: stopgate halted the session: 1 check failed", `validator "never"`, "never good enough"} {
		if !strings.Contains(said, want) {
			r.Errorf("the stream-json output does not show the halt: no %q in its system messages:\n%s", want, said)
		}
	}

	cmd := exec.Command(filepath.Join(Stopgate(t), "gate"), "verdict", r.SessionID)
	cmd.Dir = p.Dir
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Errorf("gate verdict %s: %v, want exit status 1\n%s", r.SessionID, err, out)
	}
	if want := "halt: the last stop of session " + r.SessionID; !strings.HasPrefix(string(out), want) || !strings.Contains(string(out), "was halted: failed never") {
		t.Errorf("gate verdict said %q, want %q … was halted: failed never", out, want)
	}
}
