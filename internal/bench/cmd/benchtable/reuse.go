package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/stopgate/stopgate/internal/bench"
	"github.com/stopgate/stopgate/internal/reuse"
)

// spinSource is a CPU-bound validator: it hashes a buffer the number of
// times its argument says, and exits 0.
const spinSource = `package main

import (
	"crypto/sha256"
	"os"
	"strconv"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	buf := make([]byte, 64<<10)
	for i := 0; i < n; i++ {
		s := sha256.Sum256(buf)
		buf[0] = s[0]
	}
}
`

// reuse measures the second stop after one of four CPU-bound validators
// of about 1 s each was fixed, with reuse off (all four run again) and on
// (only the fixed one runs), beside one such validator run alone.
func (o *options) reuse(t *bench.Table) error {
	const before, after = "second stop, 1 of 4 CPU-bound 1 s validators fixed, reuse off (all four run)", "second stop, 1 of 4 CPU-bound 1 s validators fixed, reuse on (only the fixed one runs)"
	if !o.wants(before) && !o.wants(after) {
		return nil
	}
	spin, err := buildFloor(o.gocmd, o.tmp, "spin", spinSource)
	if err != nil {
		return err
	}
	n, err := calibrate(spin, time.Second)
	if err != nil {
		return err
	}
	line := fmt.Sprintf("%s %d", spin, n)
	cases := []bench.Case{{Name: "one CPU-bound validator alone (about 1 s)", Cmd: &bench.Cmd{Path: spin, Args: []string{fmt.Sprint(n)}, Env: o.env("")}}}
	for _, c := range []struct {
		name  string
		reuse bool
	}{{before, false}, {after, true}} {
		p, err := bench.WriteReuseProject(filepath.Join(o.tmp, fmt.Sprintf("reuse-%t", c.reuse)), line, c.reuse)
		if err != nil {
			return err
		}
		session := func(i int) string { return fmt.Sprintf("bench-reuse-%d", i) }
		first := o.hook(o.gate, p.Dir, func(i int) []byte { return bench.StopEvent(p.Dir, session(i)) }, contains(`"decision":"block"`))
		second := o.armedStop(o.gate, p, session, silent)
		arm := second.Before
		// Untimed: arm, break cpu1, the first stop (all four run, cpu1
		// fails), then the fix.
		second.Before = func(i int) error {
			if err := arm(i); err != nil {
				return err
			}
			if err := p.Break(true); err != nil {
				return err
			}
			if _, err := first.Run(i); err != nil {
				return err
			}
			return p.Break(false)
		}
		cases = append(cases, bench.Case{Name: c.name, Cmd: second})
	}
	runs := max(3, o.gateRuns/2)
	o.logf("measuring the second stop with and without reuse, 1+%d runs each (about a minute)", runs)
	rows(t, bench.Interleave(cases, 1, runs), "one alone", "–", ratio)
	return nil
}

// calibrate returns the spin count that takes about d on this machine.
func calibrate(spin string, d time.Duration) (int, error) {
	const probe = 2000
	start := time.Now()
	if out, err := exec.Command(spin, fmt.Sprint(probe)).CombinedOutput(); err != nil {
		return 0, fmt.Errorf("spin: %w: %s", err, out)
	}
	took := time.Since(start)
	return max(1, int(float64(probe)*float64(d)/float64(took))), nil
}

// fingerprints measures the fingerprint of the working tree at 10,000 and
// 100,000 files (in the gate, before the validators run, when reuse is
// on): in a git work tree with the stat cache warm (the usual stop) and
// cold (every file hashed), in a plain folder, and git status, git's own
// check of its index, for comparison; each beside the floor of a bare
// walk that lstats every file.
func (o *options) fingerprints(t *bench.Table) error {
	for _, n := range []int{10000, 100000} {
		prefix := fmt.Sprintf("fingerprint, %s files", count(n))
		if !o.wants(prefix) {
			continue
		}
		o.logf("writing a %d-file tree, twice", n)
		git, plain := filepath.Join(o.tmp, fmt.Sprintf("tree-git-%d", n)), filepath.Join(o.tmp, fmt.Sprintf("tree-plain-%d", n))
		if err := bench.WriteTree(git, n, true); err != nil {
			return err
		}
		if err := bench.WriteTree(plain, n, false); err != nil {
			return err
		}
		time.Sleep(1100 * time.Millisecond) // past the cache's racy second
		cache := filepath.Join(o.tmp, fmt.Sprintf("cache-%d", n))
		take := func(root, cache string) func() error {
			return func() error {
				tr, err := reuse.Take(context.Background(), root, reuse.Options{Cache: cache})
				if err == nil && len(tr.Files) != n {
					err = fmt.Errorf("%d files, want %d", len(tr.Files), n)
				}
				return err
			}
		}
		fn := func(name string, f func() error) bench.Case { return bench.Case{Name: name, Cmd: &bench.Cmd{Func: f}} }
		cases := []bench.Case{
			fn("lstat of every file (a bare walk), "+count(n)+" files", func() error { return lstatAll(plain) }),
			fn(prefix+", git work tree, stat cache warm", take(git, cache+"-git")),
			fn(prefix+", git work tree, stat cache cold (every file hashed)", func() error {
				os.Remove(cache + "-cold")
				return take(git, cache+"-cold")()
			}),
			fn(prefix+", plain folder (walk), stat cache warm", take(plain, cache+"-plain")),
			fn("git status --porcelain -uall (git's index check, for comparison), "+count(n)+" files", func() error {
				cmd := exec.Command("git", "status", "--porcelain", "-uall")
				cmd.Dir, cmd.Env = git, append(os.Environ(), "GIT_OPTIONAL_LOCKS=0")
				return cmd.Run()
			}),
		}
		rounds := max(5, o.gateRuns)
		if n >= 100000 {
			rounds = 5
		}
		o.logf("measuring the fingerprint of %d files, 1+%d runs each", n, rounds)
		rows(t, bench.Interleave(cases, 1, rounds), "lstat walk", "1.00×", ratio)
	}
	return nil
}

func lstatAll(root string) error {
	return filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		_, err = os.Lstat(p)
		return err
	})
}
