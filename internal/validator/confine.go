package validator

import (
	"bytes"
	"cmp"
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

// Confinement runs a stop's Run commands in one bubblewrap sandbox with
// ReadOnly read-only (docs/security.md#confined-validators).
type Confinement struct {
	Required bool     // a command that cannot be confined is not run (Result.Unconfined)
	ReadOnly []string // absolute; the missing skipped (see Missing), symlinks followed
	// Writable are folders bound writable over a read-only one above them.
	Writable []string
	Env      []string // KEY=VALUE set over the gate's environment inside
}

// bwrapBase are the arguments of every confined command, before the mounts.
var bwrapBase = []string{"--dev-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--proc", "/proc", "--cap-drop", "ALL", "--die-with-parent"}

var probe struct {
	once sync.Once
	made atomic.Bool // the probe ran in this process
	path string
	err  error
}

// Bwrap returns the path of a bwrap that can confine a command here, or
// why there is none; it probes once per process.
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

func lookBwrap() (string, error) {
	path, err := program.System("bwrap")
	if err != nil {
		return "", errors.New("bwrap is not installed (the Debian and Ubuntu package is bubblewrap)")
	}
	return path, nil
}

// cannotSandbox is why bwrap failed: the first line it printed, or how it ended.
func cannotSandbox(path, stderr string, err error) error {
	why := cmp.Or(strings.TrimSuffix(strings.TrimSpace(firstLine(stderr)), "."), err.Error())
	return fmt.Errorf("%s cannot create a sandbox here: %s", path, why)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// args returns bwrap's arguments that run argv in dir confined.
func (c *Confinement) args(dir string, argv ...string) []string {
	args, m := slices.Clone(bwrapBase), c.mounts()
	for _, p := range slices.Sorted(maps.Keys(m)) { // a folder before what is in it
		args = append(args, m[p], p, p)
	}
	for _, kv := range c.Env {
		k, v, _ := strings.Cut(kv, "=")
		args = append(args, "--setenv", k, v)
	}
	return append(append(args, "--chdir", dir, "--"), argv...)
}

// mounts maps each path bound onto itself to its bwrap option: the
// existing ReadOnly ("--ro-bind") and Writable paths, symlinks resolved,
// and every directory above them (or above the nearest existing parent of
// a missing one) not inside a read-only one, pinned ("--bind").
func (c *Confinement) mounts() map[string]string {
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
	return m
}

// readOnlyIn reports whether dir lies in a read-only mount of m, with no
// writable one between: nothing can rename it.
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

// Missing returns the paths that do not exist (or dangle): bwrap cannot
// mount them, so the caller checks after the run that none Appeared.
func Missing(paths []string) []string {
	return statted(paths, func(err error) bool { return errors.Is(err, os.ErrNotExist) })
}

// Appeared returns those of missing that exist now.
func Appeared(missing []string) []string {
	return statted(missing, func(err error) bool { return err == nil })
}

// statted returns the paths whose os.Stat error keep accepts, nil for none.
func statted(paths []string, keep func(error) bool) []string {
	var out []string
	for _, p := range paths {
		if _, err := os.Stat(p); keep(err) {
			out = append(out, p)
		}
	}
	return out
}

func unconfined(err error) Result {
	return Result{Problem: "not run: it must be confined ([settings] confine = true), but " + err.Error(), ExitCode: -1, Unconfined: true}
}
