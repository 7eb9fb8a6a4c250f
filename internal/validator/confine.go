package validator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Confinement runs each Run command inside bubblewrap with ReadOnly
// mounted read-only: a validator that runs code the agent wrote (its
// tests) cannot rewrite what decides the checks. Everything else is as
// outside: the same file system, writable (HOME, /tmp, build caches), the
// same environment, network and working directory. Inside, the command
// has no capabilities, so it cannot unmount or remount the read-only
// paths, its own /proc (a new pid namespace), so it cannot reach the file
// system through /proc/PID/root of a process outside, and a fresh /dev
// without the host's disks.
type Confinement struct {
	// Required makes a command that cannot be confined (no bwrap, or one
	// that cannot create a sandbox here) a failing Result with Unconfined
	// set, never run; otherwise it runs unconfined.
	Required bool
	// ReadOnly are absolute paths; those that do not exist are skipped,
	// symlinks are mounted as the file they lead to.
	ReadOnly []string
}

// bwrapBase are the arguments of every confined command, before the
// read-only mounts.
var bwrapBase = []string{
	"--dev-bind", "/", "/",
	"--dev", "/dev",
	"--unshare-pid", "--proc", "/proc",
	"--cap-drop", "ALL",
}

var probe struct {
	once sync.Once
	path string
	err  error
}

// Bwrap returns the path of a bwrap that can confine a command here, or
// why there is none: not installed, or unable to create a sandbox (no user
// namespaces for an unprivileged user, a seccomp filter, macOS). It tries
// once per process.
func Bwrap() (string, error) {
	probe.once.Do(func() { probe.path, probe.err = findBwrap() })
	return probe.path, probe.err
}

func findBwrap() (string, error) {
	path, err := exec.LookPath("bwrap")
	if err != nil {
		return "", errors.New("bwrap is not installed (the Debian and Ubuntu package is bubblewrap)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, append(slices.Clone(bwrapBase), "--", "true")...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		why := strings.TrimSuffix(strings.TrimSpace(firstLine(stderr.String())), ".")
		if why == "" {
			why = err.Error()
		}
		return "", fmt.Errorf("%s cannot create a sandbox here: %s", path, why)
	}
	return path, nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// command returns the program and arguments that run `sh -c run` in dir
// confined, or why it cannot be confined.
func (c *Confinement) command(dir, run string) (string, []string, error) {
	bwrap, err := Bwrap()
	if err != nil {
		return "", nil, err
	}
	args := slices.Clone(bwrapBase)
	for _, p := range c.mounts() {
		args = append(args, "--ro-bind", p, p)
	}
	args = append(args, "--chdir", dir, "--", "sh", "-c", run)
	return bwrap, args, nil
}

// mounts returns the ReadOnly paths that exist, symlinks resolved, sorted
// so that a folder comes before what is in it, each once.
func (c *Confinement) mounts() []string {
	var out []string
	for _, p := range c.ReadOnly {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		if _, err := os.Stat(real); err == nil && !slices.Contains(out, real) {
			out = append(out, real)
		}
	}
	slices.Sort(out)
	return out
}

// unconfined is the Result of a command that had to be confined and could
// not be: it is not run.
func unconfined(err error) Result {
	return Result{Problem: "not run: it must be confined ([settings] confine = true), but " + err.Error(), ExitCode: -1, Unconfined: true}
}
