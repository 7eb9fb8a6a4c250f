package detect

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/hook"
)

// TestGuardPanicDenies is a real panic inside the guard (an Env without
// Getenv, called for $HOME): the call is denied, naming the bug, never let
// through and never Go's exit 2.
func TestGuardPanicDenies(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "mappings.toml"), []byte("[[mapping]]\nprompt = \"p\"\nvalidators = [\"v\"]\n[validators.v]\nrun = \"true\"\n"), 0o644)
	var stdout, stderr bytes.Buffer
	env := &cli.Env{Stdout: &stdout, Stderr: &stderr, Dir: root} // no Getenv
	in := &hook.Input{SessionID: "s1", HookEventName: hook.PreToolUse, ToolName: "Bash", Tool: hook.ToolInput{Command: "ls"}, Cwd: root}
	if err := guardTool(env, in, hook.AnswerTo(&stdout, in), root, ""); err != nil {
		t.Fatalf("guardTool = %v, want a deny on stdout", err)
	}
	if out := stdout.String(); !strings.Contains(out, `"permissionDecision":"deny"`) || !strings.Contains(out, "internal error (a bug in stopgate)") {
		t.Errorf("stdout = %s", out)
	}
	if !strings.Contains(stderr.String(), "goroutine") {
		t.Errorf("stderr has no stack trace: %s", stderr.String())
	}
}
