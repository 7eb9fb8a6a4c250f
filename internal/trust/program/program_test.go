package program

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plant puts an executable named name in a new folder and puts that folder
// first on PATH: where the agent's env.PATH or a project folder would.
func plant(t *testing.T, name string) string {
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return p
}

// TestProgramIgnoresPath: gate-otel missing beside the running program is
// missing, whatever PATH holds.
func TestStopgateIgnoresPath(t *testing.T) {
	planted := plant(t, "gate-otel")
	p, err := Stopgate("gate-otel")
	if err == nil || p == planted {
		t.Fatalf("Stopgate(gate-otel) = %q, %v; want an error, never the one on PATH (%s)", p, err, planted)
	}
	if !strings.Contains(err.Error(), "not installed beside the gate") {
		t.Errorf("error %q does not say where it looked", err)
	}
}

// TestProgramBeside: the program beside the running one is found there.
func TestStopgateBeside(t *testing.T) {
	self, err := Self()
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Base(self)
	if p, err := Stopgate(name); err != nil || p != self {
		t.Errorf("Stopgate(%q) = %q, %v; want %q", name, p, err, self)
	}
}

// TestSystemIgnoresPath: sh is the system's, never the one PATH names first.
func TestSystemIgnoresPath(t *testing.T) {
	planted := plant(t, "sh")
	p, err := System("sh")
	if err != nil {
		t.Skip("no sh in the system folders:", err)
	}
	if p == planted || !filepath.IsAbs(p) {
		t.Errorf("System(sh) = %q; want the system's, not %q", p, planted)
	}
	if Shell() != p {
		t.Errorf("Shell() = %q, want %q", Shell(), p)
	}
	if _, err := System("stopgate-no-such-program"); err == nil {
		t.Error("a missing program was found")
	}
}
