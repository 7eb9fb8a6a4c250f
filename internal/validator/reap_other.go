//go:build !linux

package validator

import "syscall"

// Outside Linux: no subreaper, no parent-death signal, nothing confined.
func adoptOrphans()      {}
func reapGroup(pgid int) {}
func hideSelf()          {}

func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
