package validator

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/stopgate/stopgate/internal/trust/program"
)

// watchdog kills the process groups of the unconfined validators of one
// Run when the gate dies.
//
// An unconfined validator's shell dies with the gate (its parent-death
// signal), but what that shell forked (the test binaries of go test, a
// server a test started) does not: the signal is not inherited. The
// watchdog, one shell in a group of its own per Run, reads the groups
// from a pipe only the gate holds; at EOF, when the gate is gone however
// it died (SIGKILL included), it kills them all. A confined validator
// needs none: bwrap dies with the gate and its pid namespace with it.
// Without a watchdog (it could not start) the validators run as before.
type watchdog struct {
	once sync.Once
	mu   sync.Mutex
	cmd  *exec.Cmd
	pw   *os.File
}

// ready starts the watchdog, once, before a command starts: between the
// command's start and watch, a gate killed leaves that group unwatched,
// and that window must not hold the watchdog's own start.
func (d *watchdog) ready() { d.once.Do(d.start) }

// watch hands the group pgid to the watchdog.
func (d *watchdog) watch(pgid int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.pw != nil {
		fmt.Fprintf(d.pw, "%d\n", pgid)
	}
}

func (d *watchdog) start() {
	pr, pw, err := os.Pipe()
	if err != nil {
		return
	}
	cmd := exec.Command(program.Shell(), "-c", `while read p; do g="$g -$p"; done; kill -9 $g`)
	cmd.Stdin = pr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	pr.Close()
	if err != nil {
		pw.Close()
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cmd, d.pw = cmd, pw
}

// stop ends the watchdog once every validator of the Run is done: killed
// before the pipe closes, it kills nothing.
func (d *watchdog) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cmd != nil {
		d.cmd.Process.Kill()
		d.cmd.Wait()
		d.pw.Close()
	}
}
