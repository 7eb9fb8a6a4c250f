//go:build !linux

package validator

// adoptOrphans is Linux-only (PR_SET_CHILD_SUBREAPER); elsewhere orphans go
// to init as usual.
func adoptOrphans() {}

// reapGroup has nothing to reap where orphans are not adopted.
func reapGroup(pgid int) {}
