package detect

import (
	"os/exec"
	"strings"
	"testing"
)

// TestHotPathLinksNoHTTP keeps net/http and crypto/tls out of the programs
// that run on every tool call of the agent: their package init runs on
// each event, and through net's resolver `go install` links libc. The
// judge's model client lives in internal/modelapi, which only the gate
// imports.
func TestHotPathLinksNoHTTP(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	for _, cmd := range []string{"cmd/detect", "cmd/testhook"} {
		out, err := exec.Command("go", "list", "-deps", "github.com/stopgate/stopgate/"+cmd).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", cmd, err)
		}
		for _, pkg := range []string{"net/http", "crypto/tls"} {
			for line := range strings.Lines(string(out)) {
				if strings.TrimSpace(line) == pkg {
					t.Errorf("%s links %s: keep HTTP clients out of the hooks' hot path (see internal/modelapi)", cmd, pkg)
				}
			}
		}
	}
}
