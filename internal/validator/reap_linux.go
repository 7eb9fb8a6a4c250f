package validator

import "syscall"

// PR_SET_CHILD_SUBREAPER and PR_SET_DUMPABLE from <linux/prctl.h>.
const (
	prSetChildSubreaper = 36
	prSetDumpable       = 4
)

// adoptOrphans makes this process the reaper of its orphaned descendants:
// pid 1 in a container may reap a killed validator's children late or
// never. An error leaves them to pid 1.
func adoptOrphans() { syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0) }

// reapGroup waits for the children of this process in group pgid (the
// killed, orphaned members of a validator's group), never another's.
func reapGroup(pgid int) {
	for {
		_, err := syscall.Wait4(-pgid, nil, 0, nil)
		if err != syscall.EINTR && err != nil { // ECHILD: none left
			return
		}
	}
}

// procAttr starts a validator in a group of its own, SIGKILLed when the
// gate dies: a killed gate must not leave it running past its timeout.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// hideSelf makes the runner non-dumpable: a validator of the same user can
// neither open its files through /proc/PID/fd nor trace it.
func hideSelf() { syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0) }
