package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDemo guards README's first command: the demo, on freshly built
// binaries, shows the armed prompt, the blocked stop with its remediation
// text, and the passing stop after the fix.
func TestDemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binaries")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-tags", "osusergo,netgo", "-o", bin+"/", "github.com/stopgate/stopgate/cmd/detect", "github.com/stopgate/stopgate/cmd/gate")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// The demo runs from the repo root, like make demo.
	wd, _ := os.Getwd()
	t.Chdir(filepath.Join(wd, "../.."))
	var out strings.Builder
	if err := run(bin, &out); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	for _, want := range []string{
		`the prompt "joke" will be checked`,
		"The stop is blocked; the model receives:",
		"│   | output/joke.txt: no such file",
		"│   Fix: Write the joke to output/joke.txt.",
		"│   | no worktree at .worktrees/stopgate-demo",
		"(no output: the client carries on; for a stop, the agent may stop)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo output lacks %q:\n%s", want, out.String())
		}
	}
	if n := strings.Count(out.String(), "The stop is blocked"); n != 2 {
		t.Errorf("%d blocked stops, want 2", n)
	}
	if n := strings.Count(out.String(), "for a stop, the agent may stop"); n != 2 {
		t.Errorf("%d passing stops, want 2", n)
	}
}
