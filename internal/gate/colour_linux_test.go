package gate

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stopgate/stopgate/internal/cli"
)

// openPTY returns a pseudo-terminal pair: what is written to tty is read
// from pty.
func openPTY(t *testing.T) (pty, tty *os.File) {
	t.Helper()
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals here: %v", err)
	}
	var unlock int32
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, pty.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skipf("unlocking the pseudo-terminal: %v", e)
	}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, pty.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skipf("naming the pseudo-terminal: %v", e)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("opening the terminal side: %v", err)
	}
	t.Cleanup(func() { pty.Close(); tty.Close() })
	return pty, tty
}

// gate run colours ✔ and ✘ on a terminal, and not with NO_COLOR set.
func TestRunColour(t *testing.T) {
	root := t.TempDir()
	mappings := "[[mapping]]\nprompt = \"p\"\nvalidators = [\"there\", \"missing\"]\n" +
		"[validators.there]\nfile = \"mappings.toml\"\n[validators.missing]\nfile = \"missing.txt\"\n"
	if err := os.WriteFile(filepath.Join(root, "mappings.toml"), []byte(mappings), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		noColor string
		colour  bool
	}{{"", true}, {"1", false}} {
		pty, tty := openPTY(t)
		var stderr bytes.Buffer
		env := &cli.Env{
			Args: []string{"run", "p"}, Stdin: strings.NewReader(""), Stdout: tty, Stderr: &stderr, Dir: root,
			Getenv: func(k string) string {
				return map[string]string{"CLAUDE_PROJECT_DIR": root, "NO_COLOR": tt.noColor}[k]
			},
		}
		if code := cli.Run("gate", env, Run, Usage); code != 1 {
			t.Fatalf("gate run exited %d, want 1 (a validator fails); stderr: %s", code, stderr.String())
		}
		tty.Close()
		out, _ := io.ReadAll(pty) // ends with EIO once the terminal side is closed
		got := string(out)
		green, red := "\x1b[32m✔\x1b[0m there", "\x1b[31m✘\x1b[0m missing"
		if tt.colour && (!strings.Contains(got, green) || !strings.Contains(got, red)) {
			t.Errorf("on a terminal: no colour in %q", got)
		}
		if !tt.colour && (strings.Contains(got, "\x1b[") || !strings.Contains(got, "✘ missing")) {
			t.Errorf("NO_COLOR=%s: %q", tt.noColor, got)
		}
	}
}
