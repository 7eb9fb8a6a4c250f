package validator

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"

	"github.com/stopgate/stopgate/internal/trust/program"
)

// watchdog, a shell in a group of its own, kills the process groups of
// one Run's unconfined validators when the pipe only the gate holds closes
// (the gate died, even by SIGKILL): the parent-death signal reaches their
// shells, not what those forked.
type watchdog struct {
	once sync.Once
	mu   sync.Mutex
	cmd  *exec.Cmd
	pw   *os.File
}

// ready starts the watchdog, once, before a command starts (not between
// its start and watch).
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

// stop ends the watchdog once the Run is done: killed before the pipe
// closes, it kills nothing.
func (d *watchdog) stop() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cmd != nil {
		d.cmd.Process.Kill()
		d.cmd.Wait()
		d.pw.Close()
	}
}
