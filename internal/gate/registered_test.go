package gate

import (
	"testing"

	"github.com/stopgate/stopgate/internal/guard"
)

// TestHookFilesProtected: every file gate init registers hooks in is the
// one the protected set takes for that client.
func TestHookFilesProtected(t *testing.T) {
	files := guard.HookFiles()
	if files["Claude Code"] != settingsFile {
		t.Errorf("Claude Code: the guard protects %q, gate init writes %q", files["Claude Code"], settingsFile)
	}
	for _, c := range agentClients {
		if files[c.title] != c.file {
			t.Errorf("%s: the guard protects %q, gate init writes %q", c.title, files[c.title], c.file)
		}
	}
}
