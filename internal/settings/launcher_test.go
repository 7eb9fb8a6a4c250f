package settings

import (
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

func TestLauncherRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		cands []string
		args  string
		prog  string
		paths []string
	}{
		{[]string{`"$CLAUDE_PROJECT_DIR"/bin/gate`}, "", "gate", []string{"$CLAUDE_PROJECT_DIR/bin/gate"}},
		{[]string{`'/home/o'\''neil/bin/detect'`, `"$CLAUDE_PROJECT_DIR"/node_modules/@stopgate/*/bin/detect`}, "--client codex", "detect",
			[]string{"/home/o'neil/bin/detect", "$CLAUDE_PROJECT_DIR/node_modules/@stopgate/*/bin/detect"}},
	} {
		cmd := Launcher(tt.cands, tt.args, `{"continue":false,"stopReason":"it's missing"}`)
		words, ok := Candidates(cmd)
		if !ok || !slices.Equal(words, tt.cands) {
			t.Errorf("Candidates(%q) = %q, %v; want %q", cmd, words, ok, tt.cands)
		}
		if got := Program(cmd); got != tt.prog {
			t.Errorf("Program(%q) = %q, want %q", cmd, got, tt.prog)
		}
		if got := Paths(cmd); !slices.Equal(got, tt.paths) {
			t.Errorf("Paths(%q) = %q, want %q", cmd, got, tt.paths)
		}
	}
	if _, ok := Candidates(`"$CLAUDE_PROJECT_DIR"/bin/gate`); ok {
		t.Error("a plain command is no launcher")
	}
}

// The launcher runs in a real POSIX shell: the fallback, quotes and all,
// when no candidate is executable; the program with its arguments when one is.
func TestLauncherRuns(t *testing.T) {
	dir := t.TempDir()
	fallback := `{"stopReason":"it's 100% missing"}`
	cmd := Launcher([]string{filepath.Join(dir, "nope"), filepath.Join(dir, "*", "gate")}, "--x 'a b'", fallback)
	out, err := exec.Command("sh", "-c", cmd).Output()
	if err != nil || string(out) != fallback+"\n" {
		t.Fatalf("missing: %q, %v; want the fallback", out, err)
	}
	out, err = exec.Command("sh", "-c", Launcher([]string{"/bin/echo"}, "--x 'a b'", fallback)).Output()
	if err != nil || string(out) != "--x a b\n" {
		t.Fatalf("present: %q, %v", out, err)
	}
	out, err = exec.Command("sh", "-c", Launcher([]string{filepath.Join(dir, "nope")}, "", "")).Output()
	if err != nil || len(out) != 0 {
		t.Fatalf("no fallback: %q, %v; want silence and exit 0", out, err)
	}
}
