package validator

import (
	"os"
	"os/exec"
	"strconv"
	"syscall"
)

// watchGroup starts a watchdog that kills process group pgid when the gate
// dies, and returns what ends the watchdog once the group is dealt with.
//
// An unconfined validator's shell dies with the gate (its parent-death
// signal), but what that shell forked (the test binaries of go test, a
// server a test started) does not: the signal is not inherited. The
// watchdog, a shell of its own group blocked reading a pipe only the gate
// holds, reads EOF when the gate is gone, however it died (SIGKILL
// included), and kills the whole group. A confined validator needs none:
// bwrap dies with the gate and its pid namespace with it. Without a
// watchdog (it could not start) the validator runs as before.
func watchGroup(pgid int) (stop func()) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return func() {}
	}
	w := exec.Command("sh", "-c", `read x; kill -9 -"$1"`, "stopgate-watchdog", strconv.Itoa(pgid))
	w.Stdin = pr
	w.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = w.Start()
	pr.Close()
	if err != nil {
		pw.Close()
		return func() {}
	}
	return func() {
		w.Process.Kill() // before the pipe closes, so it kills nothing
		w.Wait()
		pw.Close()
	}
}
