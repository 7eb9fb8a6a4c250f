package validator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stopgate/stopgate/internal/trust/program"
)

// Confinement runs the Run commands of a stop inside one bubblewrap
// (sandbox.go) with ReadOnly mounted read-only: a validator that runs code
// the agent wrote (its tests) cannot rewrite what decides the checks. Everything else is as
// outside: the same file system, writable (HOME, /tmp, build caches), the
// same environment, network and working directory. Inside, the command
// has no capabilities, so it cannot unmount or remount the read-only
// paths, its own /proc (a new pid namespace), so it cannot reach the file
// system through /proc/PID/root of a process outside, and a fresh /dev
// without the host's disks.
//
// Read-only mounts alone leave their parents open: renaming the project
// root away and putting a writable copy in its place (or a new bin/gate)
// goes around them. So every directory above a read-only path, up to /,
// is bound onto itself, writable: a mount point cannot be renamed,
// removed or replaced (EBUSY), while what is in it stays writable, so a
// test still writes its files in the project, HOME or /tmp. Mounting the
// parents read-only instead would refuse those writes. The one cost: a
// rename(2) from one of these mounts into another fails with EXDEV, as
// it does between file systems, and tools copy instead (mv, cmd/go).
//
// A read-only path that does not exist cannot be mounted without
// creating it in the host's tree (bwrap makes the mount point there, and
// it would stay after a SIGKILL): Missing lists them before the run, and
// the caller checks that none appeared after it. The pid namespace ends
// every process of a validator with it, so nothing creates one later.
//
// bwrap dies with the gate (--die-with-parent), and the pid namespace
// with it: a SIGKILLed gate leaves no validator running.
type Confinement struct {
	// Required makes a command that cannot be confined (no bwrap, or one
	// that cannot create a sandbox here) a failing Result with Unconfined
	// set, never run; otherwise it runs unconfined.
	Required bool
	// ReadOnly are absolute paths; those that do not exist are skipped,
	// symlinks are mounted as the file they lead to.
	ReadOnly []string
	// Writable are absolute folders bound writable over a read-only one
	// above them (HOME's caches, the project in HOME); a read-only path
	// inside one stays read-only.
	Writable []string
	// Env are KEY=VALUE set over the gate's environment inside.
	Env []string
}

// bwrapBase are the arguments of every confined command, before the
// read-only mounts.
var bwrapBase = []string{
	"--dev-bind", "/", "/",
	"--dev", "/dev",
	"--unshare-pid", "--proc", "/proc",
	"--cap-drop", "ALL",
	"--die-with-parent",
}

var probe struct {
	once sync.Once
	made atomic.Bool // the probe ran in this process
	path string
	err  error
}

// Bwrap returns the path of a bwrap that can confine a command here, or
// why there is none: not installed, or unable to create a sandbox (no user
// namespaces for an unprivileged user, a seccomp filter, macOS). It tries
// once per process. A stop asks it first only to decide reuse by default
// (stop's ReusePolicy: a record is trusted only where validators are
// confined), one bwrap start more; otherwise the start of its sandbox is
// the probe (sandbox.go), and only a sandbox that did not start asks why.
func Bwrap() (string, error) {
	probe.once.Do(func() { probe.path, probe.err = findBwrap(); probe.made.Store(true) })
	return probe.path, probe.err
}

func findBwrap() (string, error) {
	path, err := lookBwrap()
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, append(slices.Clone(bwrapBase), "--", "true")...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return "", cannotSandbox(path, stderr.String(), err)
	}
	return path, nil
}

// lookBwrap finds bwrap among the system's programs (program.System).
func lookBwrap() (string, error) {
	path, err := program.System("bwrap")
	if err != nil {
		return "", errors.New("bwrap is not installed (the Debian and Ubuntu package is bubblewrap)")
	}
	return path, nil
}

// cannotSandbox is why bwrap at path failed: the first line it printed, or
// how it ended.
func cannotSandbox(path, stderr string, err error) error {
	why := strings.TrimSuffix(strings.TrimSpace(firstLine(stderr)), ".")
	if why == "" {
		why = err.Error()
	}
	return fmt.Errorf("%s cannot create a sandbox here: %s", path, why)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// args returns bwrap's arguments that run argv in dir confined.
func (c *Confinement) args(dir string, argv ...string) []string {
	args := slices.Clone(bwrapBase)
	for _, m := range c.mounts() {
		args = append(args, m.op, m.path, m.path)
	}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	return append(append(args, "--chdir", dir, "--"), argv...)
}

// mount is one bind of a path onto itself: "--ro-bind" for a protected
// path, "--bind" for a directory above one (pinned: not renamable).
type mount struct{ op, path string }

// mounts returns the binds of the ReadOnly paths that exist, symlinks
// resolved, of the Writable ones, and of every directory above them and
// above the nearest existing parent of those that do not, each once, but
// those inside a read-only one (which nothing can rename), sorted so that
// a folder comes before what is in it.
func (c *Confinement) mounts() []mount {
	m := map[string]string{} // path: its op
	for _, p := range c.Writable {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			m[real] = "--bind"
		}
	}
	var above []string // the folders to pin
	for _, p := range c.ReadOnly {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			if dir := existingParent(p); dir != "" {
				above = append(above, dir)
			}
			continue
		}
		if _, err := os.Stat(real); err == nil && m[real] == "" {
			m[real] = "--ro-bind"
			above = append(above, filepath.Dir(real))
		}
	}
	for p := range maps.Clone(m) {
		above = append(above, filepath.Dir(p))
	}
	for _, dir := range above {
		for ; dir != "/" && dir != "." && m[dir] == ""; dir = filepath.Dir(dir) {
			if !readOnlyIn(m, dir) {
				m[dir] = "--bind"
			}
		}
	}
	out := make([]mount, 0, len(m))
	for p, op := range m {
		out = append(out, mount{op, p})
	}
	slices.SortFunc(out, func(a, b mount) int { return strings.Compare(a.path, b.path) })
	return out
}

// readOnlyIn reports whether dir lies in a read-only mount of m, with no
// writable one between: it cannot be renamed or replaced already.
func readOnlyIn(m map[string]string, dir string) bool {
	for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
		switch m[d] {
		case "--ro-bind":
			return true
		case "--bind":
			return false
		}
		if d == "/" || d == "." {
			return false
		}
	}
}

// existingParent returns the nearest directory above p that exists,
// symlinks resolved, or "".
func existingParent(p string) string {
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		if real, err := filepath.EvalSymlinks(dir); err == nil {
			return real
		}
		if dir == filepath.Dir(dir) {
			return ""
		}
	}
}

// Missing returns the paths that do not exist (or lead nowhere, a
// dangling symlink): those of ReadOnly cannot be mounted, so the caller
// checks after the run that none appeared (Appeared).
func Missing(paths []string) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			out = append(out, p)
		}
	}
	return out
}

// Appeared returns those of missing that exist now.
func Appeared(missing []string) []string {
	var out []string
	for _, p := range missing {
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// unconfined is the Result of a command that had to be confined and could
// not be: it is not run.
func unconfined(err error) Result {
	return Result{Problem: "not run: it must be confined ([settings] confine = true), but " + err.Error(), ExitCode: -1, Unconfined: true}
}
