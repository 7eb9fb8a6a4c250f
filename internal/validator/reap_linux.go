package validator

import "syscall"

// prSetChildSubreaper is PR_SET_CHILD_SUBREAPER from <linux/prctl.h>.
const prSetChildSubreaper = 36

// adoptOrphans makes this process the reaper of its orphaned descendants:
// when a validator's shell dies, its children become ours instead of pid
// 1's. Pid 1 in a container (often the agent's own node process, or a
// sandbox's init) may reap late or never, so without this every killed
// grandchild could stay a zombie there. An error is ignored: the kernel
// then reparents to pid 1 as before.
func adoptOrphans() {
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
}

// reapGroup waits for every child of this process in process group pgid:
// the killed members of a validator's group that were orphaned to us. It
// waits only on that group, so it never takes the exit status of another
// validator running meanwhile (each runs in a group of its own), and it
// returns when no child is left in the group.
func reapGroup(pgid int) {
	for {
		_, err := syscall.Wait4(-pgid, nil, 0, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil { // ECHILD: none left
			return
		}
	}
}

// procAttr starts a validator in a process group of its own, and SIGKILLed
// when the gate dies: a gate killed by the client (or the agent) must not
// leave its validator running past its timeout. bwrap passes the signal on
// (--die-with-parent); unconfined, it reaches the shell the gate started,
// and the watchdog the children that shell forks.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// prSetDumpable is PR_SET_DUMPABLE from <linux/prctl.h>.
const prSetDumpable = 4

// hideSelf makes this process non-dumpable: another process of the same
// user (a validator in the sandbox this runner serves) can then neither
// open its files through /proc/PID/fd nor trace it. An error is ignored:
// the nonce of the report still stands.
func hideSelf() {
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, 0, 0)
}
