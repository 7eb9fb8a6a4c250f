package validator

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// adoptOrphans makes this process its orphans' reaper: pid 1 in a container may never reap them.
func adoptOrphans() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) }

// reapGroup waits for this process's children in group pgid, never another's.
func reapGroup(pgid int) {
	for {
		_, err := syscall.Wait4(-pgid, nil, 0, nil)
		if err != syscall.EINTR && err != nil { // ECHILD: none left
			return
		}
	}
}

// procAttr starts a validator in its own group, SIGKILLed when the gate dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// hideSelf makes the runner non-dumpable: no validator can open its /proc/PID/fd or trace it.
func hideSelf() { unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }
