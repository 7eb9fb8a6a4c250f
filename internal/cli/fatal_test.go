package cli_test

import (
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/settings"
)

// TestFatalHelper is the hook program of TestFatalErrorHalts: run by it,
// it dies of Go's own fatal error (a stack overflow), which no recover
// catches.
func TestFatalHelper(t *testing.T) {
	if os.Getenv("STOPGATE_FATAL_HELPER") != "1" {
		t.Skip("run by TestFatalErrorHalts")
	}
	cli.Main("gate", func(*cli.Env) error {
		debug.SetMaxStack(1 << 20)
		return overflow(0)
	}, func(io.Writer) {})
}

func overflow(n int) error {
	if n < 0 {
		return nil
	}
	var pad [256]byte
	pad[n%256] = 1
	return overflow(n + int(pad[0]) + 1)
}

// TestFatalErrorHalts: Go exits 2 on its own fatal errors (a stack
// overflow, out of memory, concurrent map writes), and exit 2 passed
// through gate init's launcher is a block Claude Code counts toward its
// cap and Copilot ignores. A program run by cli.Main dies by SIGABRT
// instead, a status over 127, for which the launcher prints its fallback:
// the stop's halt.
func TestFatalErrorHalts(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	halt := `{"continue":false,"stopReason":"gate died"}`
	line := settings.Launcher([]string{self}, "-test.run=^TestFatalHelper$", halt, "")
	cmd := exec.Command("/bin/sh", "-c", line)
	cmd.Env = append(os.Environ(), "STOPGATE_FATAL_HELPER=1", "GOTRACEBACK=")
	cmd.Dir = t.TempDir() // a core file, where the machine writes them, lands here
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("launcher: %v (stderr %q)", err, firstLines(stderr.String()))
	}
	if !strings.Contains(stderr.String(), "stack overflow") {
		t.Fatalf("the helper did not die of a fatal error: stderr %q", firstLines(stderr.String()))
	}
	if strings.TrimSpace(string(out)) != halt {
		t.Errorf("stdout %q, want the launcher's halt %q", out, halt)
	}
}

func firstLines(s string) string {
	lines := strings.SplitN(s, "\n", 4)
	return strings.Join(lines[:min(3, len(lines))], "\n")
}
