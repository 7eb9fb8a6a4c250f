package stopgate_test

import (
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// exits CODE PROG [ARGS...] runs PROG like exec and checks its exact exit
// code: a hook's 1 (non-blocking error) and 2 (blocking) mean different
// things to the client, and "! exec" cannot tell them apart.
func cmdExits(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// gone FILE checks that every pid listed in FILE (numbers among its words)
// is gone: no process and no zombie. Pids are handed out cyclically, so one
// seen again this soon is the same process.
func cmdGone(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: gone FILE")
	}
	n := 0
	for _, w := range strings.Fields(ts.ReadFile(args[0])) {
		pid, err := strconv.Atoi(w)
		if err != nil {
			continue
		}
		n++
		data, err := os.ReadFile("/proc/" + w + "/stat")
		if err != nil {
			continue
		}
		stat := string(data)
		state := "?"
		if i := strings.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
			state = stat[i+2 : i+3]
		}
		ts.Fatalf("process %d is still there (state %s)", pid, state)
	}
	if n == 0 {
		ts.Fatalf("%s lists no pids", args[0])
	}
}
