package stopgate_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

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

// waitfile FILE waits until FILE exists, for a background process to say
// it is ready. It bounds a hang (20 s), never a duration.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitfile FILE")
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(ts.MkAbs(args[0])); err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("%s did not appear within 20s", args[0])
		}
	}
}

// faultfs full|ro DIR makes DIR a real faulty file system until the script
// ends: "full" mounts a 1 MiB tmpfs there (its content copied in) and
// fills it to the last block; "ro" bind-mounts DIR onto itself read-only.
// Scripts guard it with [mountable]: not every machine can mount (not
// root, no CAP_SYS_ADMIN).
func cmdFaultFS(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 || args[0] != "full" && args[0] != "ro" {
		ts.Fatalf("usage: faultfs full|ro DIR")
	}
	dir := ts.MkAbs(args[1])
	mount := func(args ...string) {
		if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
			ts.Fatalf("mount %s: %s", strings.Join(args, " "), out)
		}
	}
	ts.Check(os.MkdirAll(dir, 0o755))
	switch args[0] {
	case "full":
		keep := dir + ".before"
		ts.Check(os.Rename(dir, keep))
		ts.Check(os.Mkdir(dir, 0o755))
		mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", dir)
		ts.Defer(func() { exec.Command("umount", "-l", dir).Run() })
		if out, err := exec.Command("cp", "-a", keep+"/.", dir).CombinedOutput(); err != nil {
			ts.Fatalf("copying into the tmpfs: %s", out)
		}
		f, err := os.Create(filepath.Join(dir, "filler"))
		ts.Check(err)
		buf := make([]byte, 4096)
		for {
			if _, err := f.Write(buf); err != nil {
				break // ENOSPC: full
			}
		}
		f.Close()
		// The last partial blocks, too: small files until none fits.
		for i := 0; ; i++ {
			if os.WriteFile(filepath.Join(dir, fmt.Sprintf("filler.%d", i)), []byte("x"), 0o644) != nil {
				break
			}
		}
	case "ro":
		mount("--bind", dir, dir)
		ts.Defer(func() { exec.Command("umount", "-l", dir).Run() })
		mount("-o", "remount,ro,bind", dir)
	}
}

// mountable reports whether this process can mount a tmpfs, the
// [mountable] condition of faultfs scripts. It is checked once.
var mountable = sync.OnceValue(func() bool {
	dir, err := os.MkdirTemp("", "mountable")
	if err != nil {
		return false
	}
	defer os.Remove(dir)
	if exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).Run() != nil {
		return false
	}
	exec.Command("umount", dir).Run()
	return true
})

// signal TERM|HUP|INT|KILL sends the signal to every background command,
// as the client, a terminal or a user would send it to a hook.
func cmdSignal(ts *testscript.TestScript, neg bool, args []string) {
	sigs := map[string]syscall.Signal{"TERM": syscall.SIGTERM, "HUP": syscall.SIGHUP, "INT": syscall.SIGINT, "KILL": syscall.SIGKILL}
	if neg || len(args) != 1 || sigs[args[0]] == 0 {
		ts.Fatalf("usage: signal TERM|HUP|INT|KILL")
	}
	for _, cmd := range ts.BackgroundCmds() {
		ts.Check(cmd.Process.Signal(sigs[args[0]]))
	}
}

// still FILE checks that FILE does not grow over a second: a heartbeat
// whose writer is gone. Only a writer still running can fail it.
func cmdStill(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: still FILE")
	}
	size := func() int64 {
		st, err := os.Stat(ts.MkAbs(args[0]))
		ts.Check(err)
		return st.Size()
	}
	before := size()
	time.Sleep(time.Second)
	if after := size(); after != before {
		ts.Fatalf("%s grew from %d to %d bytes: its writer still runs", args[0], before, after)
	}
}
