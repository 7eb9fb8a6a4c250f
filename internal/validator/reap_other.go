//go:build !linux

package validator

import "syscall"

// adoptOrphans is Linux-only (PR_SET_CHILD_SUBREAPER); elsewhere orphans go
// to init as usual.
func adoptOrphans() {}

// reapGroup has nothing to reap where orphans are not adopted.
func reapGroup(pgid int) {}

// procAttr starts a validator in a process group of its own; there is no
// parent-death signal outside Linux.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// hideSelf has nothing to do where nothing runs confined.
func hideSelf() {}
