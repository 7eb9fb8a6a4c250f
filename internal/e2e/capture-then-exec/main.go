//go:build linux

// Command capture-then-exec is the end-to-end suite's hook wrapper (see e2e.Wrapper): a
// project's bin/detect, bin/gate, ... are links to it. It saves the hook input on stdin
// to a new file in the capture directory, then execs the real command of the name it
// was called by, with that file as its stdin, so the command sees exactly what the
// client sent.
//
// Its configuration is the file beside it, capture-then-exec.conf: the capture
// directory on the first line, the directory of the real commands on the second.
//
// It is a Go program rather than a shell script because it runs inside every hook
// duration the suite checks: one exec and no fork. On the shared 2-core machine it adds
// 2–4 ms to a hook at load averages 7–9, as sh+cat does; at load 9 and up sh+cat was
// seen to add about 12 ms, this about 4 (BenchmarkWrapper).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintf(os.Stderr, "capture-then-exec: %v\n", err)
		os.Exit(1)
	}
}

func run() error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	conf, err := os.ReadFile(self + ".conf")
	if err != nil {
		return err
	}
	dirs := strings.Split(strings.TrimSpace(string(conf)), "\n")
	if len(dirs) != 2 {
		return errors.New(self + ".conf: want the capture directory and the real commands' directory, one a line")
	}
	name := filepath.Base(os.Args[0])
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dirs[0], name+".*.json")
	if err != nil {
		return err
	}
	if _, err := f.Write(input); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	// The file becomes stdin; dup3 leaves close-on-exec off on fd 0.
	if err := syscall.Dup3(int(f.Fd()), 0, 0); err != nil {
		return err
	}
	prog := filepath.Join(dirs[1], name)
	return syscall.Exec(prog, append([]string{prog}, os.Args[1:]...), os.Environ())
}
