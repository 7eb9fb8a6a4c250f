package guard

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// TestProcessPids judges literal pids against the live process table:
// the guard's own parent and a process named like a hook are denied, a
// process the guard cannot attribute to either is the agent's own.
func TestProcessPids(t *testing.T) {
	root, set := project(t, nil)
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	start := func(prog string) int {
		cmd := exec.Command(prog, "60")
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd.Process.Pid
	}
	mine := start(sleep)
	// A stand-in hook: sleep under the name of stopgate's gate.
	gate := filepath.Join(t.TempDir(), "gate")
	b, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(gate, b, 0o755); err != nil {
		t.Fatal(err)
	}
	hook := start(gate)
	for _, c := range []struct {
		cmd  string
		deny bool
	}{
		{"kill " + strconv.Itoa(mine), false},
		{"kill -STOP " + strconv.Itoa(mine), false},
		{"kill -9 " + strconv.Itoa(hook), true},
		// A -N after the signal is a process group; -1 every process, the client with them.
		{"kill -9 -1", true}, {"kill -KILL -1", true}, {"kill -s KILL -1", true}, {"kill -1 $$", false},
		{"kill -STOP " + strconv.Itoa(os.Getppid()), true},
		{"prlimit --pid " + strconv.Itoa(os.Getppid()) + " --as=1", true},
		{"prlimit --pid " + strconv.Itoa(mine) + " --as=100000000", false},
		{"strace -p " + strconv.Itoa(hook), true},
		{"kill -STOP $$", false}, // $$ of the dry run stands for the agent's own shell
		{"kill " + strconv.Itoa(mine) + " " + strconv.Itoa(os.Getppid()), true},
	} {
		h := set.CheckBash(c.cmd, root)
		if (h != nil) != c.deny {
			t.Errorf("%q: denied %v, want %v", c.cmd, h != nil, c.deny)
		}
		if h != nil && !h.proc {
			t.Errorf("%q: %s", c.cmd, h.Reason())
		}
	}
}
