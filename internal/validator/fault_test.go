package validator_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/validator"
)

// Validators that misbehave: each must end as a failing (or passing)
// Result that says what happened, without leaving processes behind and
// without holding the caller hostage.

// TestRunTimeoutKillsGroupAndReaps: a validator that hangs, with a child and
// a grandchild, is killed at its timeout with all of them, and none is left
// as a zombie (this machine's pid 1 may not reap orphans; the engine must).
func TestRunTimeoutKillsGroupAndReaps(t *testing.T) {
	dir := t.TempDir()
	// Three sleepers: a child, a grandchild under a subshell, and the
	// shell's own foreground sleep. The timeout is generous so that all
	// pids are written before it fires, even on a loaded machine.
	run := `sleep 611 & echo $! >> pids
sh -c 'sleep 612 & echo $! >> pids; wait' & echo $! >> pids
sleep 613 & echo $! >> pids
until [ "$(wc -l < pids)" -ge 4 ]; do sleep 0.01; done
echo ready >> pids
wait`
	r := validator.Run(context.Background(), validator.Env{Dir: dir}, []validator.Spec{{Name: "hang", Run: run, Timeout: 2 * time.Second}})[0]
	if r.Passed || r.ExitCode != -1 {
		t.Fatalf("Passed=%v ExitCode=%d, want a failure with exit code -1", r.Passed, r.ExitCode)
	}
	if want := "timed out after 2s and was killed, with the processes it started"; r.Problem != want {
		t.Errorf("Problem = %q, want %q", r.Problem, want)
	}
	pids := readPids(t, filepath.Join(dir, "pids"), 4)
	assertGone(t, pids)
}

// TestRunBackgroundChildHoldingOutput: a validator that exits but leaves a
// background child holding its stdout open still returns, with the output
// it wrote, and the child is killed and reaped.
func TestRunBackgroundChildHoldingOutput(t *testing.T) {
	dir := t.TempDir()
	run := `sleep 621 & echo $! > pids; echo ready >> pids; echo checked`
	r := validator.Run(context.Background(), validator.Env{Dir: dir}, []validator.Spec{{Name: "bg", Run: run}})[0]
	if !r.Passed || r.Output != "checked\n" {
		t.Fatalf("Passed=%v Output=%q Problem=%q, want a pass with output %q", r.Passed, r.Output, r.Problem, "checked\n")
	}
	assertGone(t, readPids(t, filepath.Join(dir, "pids"), 1))
}

// TestRunSetsidEscapeeIsNotWaitedFor: a child that leaves the process group
// (setsid) cannot be killed with it, and holds the output pipe open; the
// engine stops reading after its drain grace rather than waiting for it.
// The escapee still running when Run returns is the proof that Run did not
// wait for it (it sleeps far longer than any test timeout).
func TestRunSetsidEscapeeIsNotWaitedFor(t *testing.T) {
	dir := t.TempDir()
	// The escapee reports itself once it has its own session; the shell
	// waits for that, so the group kill cannot catch it on the way out.
	run := `setsid sh -c 'echo $$ > pids.tmp; echo ready >> pids.tmp; mv pids.tmp pids; exec sleep 631' &
until [ -f pids ]; do sleep 0.01; done
echo checked`
	start := time.Now()
	r := validator.Run(context.Background(), validator.Env{Dir: dir}, []validator.Spec{{Name: "escapee", Run: run}})[0]
	t.Logf("Run returned after %s with an escapee holding the pipe", time.Since(start).Round(time.Millisecond))
	pids := readPids(t, filepath.Join(dir, "pids"), 1)
	t.Cleanup(func() {
		syscall.Kill(pids[0], syscall.SIGKILL)
		syscall.Wait4(pids[0], nil, 0, nil) // ours when the engine made us a subreaper
	})
	if !r.Passed || r.Output != "checked\n" {
		t.Fatalf("Passed=%v Output=%q Problem=%q, want a pass with output %q", r.Passed, r.Output, r.Problem, "checked\n")
	}
	if state := procState(pids[0]); state == "" || state == "Z" {
		t.Fatalf("escapee %d state %q: the test did not keep the pipe open as intended", pids[0], state)
	}
}

// TestWatchdogKillsGroupWhenGateDies: a gate killed by SIGKILL while its
// validator runs leaves no child of it behind: the parent-death signal ends
// the validator's shell, and the watchdog its group (a sleeping child here).
func TestWatchdogKillsGroupWhenGateDies(t *testing.T) {
	if dir := os.Getenv("VALIDATOR_TEST_GATE_DIR"); dir != "" { // the gate, run below
		run := `sleep 641 & echo $! > pids.tmp; echo ready >> pids.tmp; mv pids.tmp pids; wait`
		validator.Run(context.Background(), validator.Env{Dir: dir}, []validator.Spec{{Name: "slow", Run: run}})
		return
	}
	dir := t.TempDir()
	gate := exec.Command(os.Args[0], "-test.run=^TestWatchdogKillsGroupWhenGateDies$")
	gate.Env = append(os.Environ(), "VALIDATOR_TEST_GATE_DIR="+dir)
	if err := gate.Start(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "pids")); err == nil || time.Now().After(deadline) {
			break
		}
	}
	gate.Process.Kill()
	gate.Wait()
	pid := readPids(t, filepath.Join(dir, "pids"), 1)[0]
	t.Cleanup(func() { syscall.Kill(pid, syscall.SIGKILL) })
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if state := procState(pid); state == "" || state == "Z" { // a zombie is dead, waiting for whoever adopted it
			syscall.Wait4(pid, nil, syscall.WNOHANG, nil)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the validator's child %d outlived the killed gate by a minute", pid)
		}
	}
}

// TestRunHugeOutputIsCapped: 50 MB of output keeps OutputLimit bytes and
// counts the rest, and the memory the engine allocates meanwhile stays
// bounded: counted in bytes allocated, not in time.
func TestRunHugeOutputIsCapped(t *testing.T) {
	const total = 50 << 20
	run := `yes 0123456789 | head -c ` + strconv.Itoa(total)
	env := validator.Env{Dir: t.TempDir()}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := validator.Run(context.Background(), env, []validator.Spec{{Name: "loud", Run: run}})[0]
	runtime.ReadMemStats(&after)
	allocated := after.TotalAlloc - before.TotalAlloc
	t.Logf("50 MiB of output: %d bytes allocated by the engine, %d mallocs", allocated, after.Mallocs-before.Mallocs)

	if !r.Passed {
		t.Fatalf("Passed=false Problem=%q", r.Problem)
	}
	const limit = 64 << 10 // the documented default OutputLimit
	if len(r.Output) != limit || r.Dropped != total-limit {
		t.Errorf("kept %d bytes and dropped %d, want %d and %d", len(r.Output), r.Dropped, limit, total-limit)
	}
	// The engine keeps 64 KiB and copies through one 32 KiB buffer; 4 MiB
	// leaves room for exec's own bookkeeping yet is far below the 50 MiB an
	// uncapped engine would allocate.
	if allocated > 4<<20 {
		t.Errorf("allocated %d bytes for 50 MiB of output, want under 4 MiB", allocated)
	}
	lines := r.Shown(3, validator.OutputHead)
	if got, want := lines[len(lines)-1], "… 5955 more lines and 52363264 more bytes (output is capped)"; got != want {
		t.Errorf("last line of Shown(3, head) = %q, want %q", got, want)
	}
}

// TestRunCannotRun: a validator that is missing, not executable, not found
// by the shell, or dies by a signal fails with a Problem a person can act
// on, and its exit code says it did not judge.
func TestRunCannotRun(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("noexec.sh", "#!/bin/sh\necho hi\n", 0o644)
	write("segv.sh", "#!/bin/sh\nkill -SEGV $$\n", 0o755)
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, run   string
		problem     string
		exitCode    int
		outputEmpty bool
	}{
		{"missing", "validators/missing.sh", "cannot start: validators/missing.sh: no such file", -1, true},
		{"missing with args", "./missing.sh --flag", "cannot start: ./missing.sh: no such file", -1, true},
		{"not executable", "./noexec.sh", "cannot start: ./noexec.sh: not executable (chmod +x ./noexec.sh)", -1, true},
		{"directory", "./adir", "cannot start: ./adir: is a directory, not a program", -1, true},
		{"not found by the shell", "no-such-command-stopgate", "exit status 127: the shell could not find the command", 127, false},
		{"empty", "   ", "cannot start: the run command is empty", -1, true},
		// The shell itself killed: the engine sees the signal.
		{"killed by a signal", "kill -SEGV $$", "killed by signal SIGSEGV (segmentation fault)", -1, true},
		// A program the shell ran killed: the shell exits 128+11 (and
		// prints its own note, kept as output).
		{"program killed by a signal", "./segv.sh", "exit status 139: the shell's code for a command killed by SIGSEGV (segmentation fault)", 139, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := validator.Run(context.Background(), validator.Env{Dir: dir}, []validator.Spec{{Name: "v", Run: tt.run}})[0]
			if r.Passed {
				t.Fatal("passed")
			}
			if r.Problem != tt.problem || r.ExitCode != tt.exitCode {
				t.Errorf("Problem=%q ExitCode=%d\nwant    %q ExitCode=%d", r.Problem, r.ExitCode, tt.problem, tt.exitCode)
			}
			if r.Summary() != tt.problem {
				t.Errorf("Summary() = %q, want the problem", r.Summary())
			}
			if tt.outputEmpty && r.Output != "" {
				t.Errorf("Output = %q, want none (the problem says it all)", r.Output)
			}
		})
	}
}

// readPids reads the pids a validator wrote, one a line, and checks the
// file ends with "ready": the validator got as far as intended.
func readPids(t *testing.T, file string, n int) []int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(data))
	if len(fields) != n+1 || fields[n] != "ready" {
		t.Fatalf("%s = %q, want %d pids then ready", file, data, n)
	}
	pids := make([]int, n)
	for i, f := range fields[:n] {
		if pids[i], err = strconv.Atoi(f); err != nil {
			t.Fatal(err)
		}
	}
	return pids
}

// assertGone fails for each pid that still exists, running or as a zombie.
// Pids are handed out cyclically, so one seen again this soon is the same
// process.
func assertGone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		if state := procState(pid); state != "" {
			t.Errorf("process %d is still there (state %s)", pid, state)
		}
	}
}

// procState returns the state letter of pid from /proc, or "" if there is
// no such process.
func procState(pid int) string {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) || err != nil {
		return ""
	}
	// pid (comm) S ...: comm may hold spaces and parentheses.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	if i < 0 || i+2 >= len(s) {
		return "?"
	}
	return s[i+2 : i+3]
}
