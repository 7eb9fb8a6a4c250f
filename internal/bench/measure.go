package bench

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"
)

// Cmd is one process to time: a binary, its input and environment.
type Cmd struct {
	Path string
	Args []string
	Dir  string
	Env  []string // the whole environment; nil inherits none
	// Stdin gives the input of run i (a fresh session, say); nil is empty.
	Stdin func(i int) []byte
	// Before prepares run i, untimed (re-arms an entry, say).
	Before func(i int) error
	// Check judges run i's output; nil accepts any output with exit 0.
	Check func(i int, stdout []byte) error
	// Func, when set, is timed instead of a process: work done in
	// process (the fingerprint of a tree).
	Func func() error
}

// Run runs c once and returns its wall time, from start to exit: what the
// client waits for.
func (c *Cmd) Run(i int) (time.Duration, error) {
	if c.Before != nil {
		if err := c.Before(i); err != nil {
			return 0, fmt.Errorf("preparing run %d: %w", i, err)
		}
	}
	if c.Func != nil {
		start := time.Now()
		err := c.Func()
		return time.Since(start), err
	}
	var stdin []byte
	if c.Stdin != nil {
		stdin = c.Stdin(i)
	}
	cmd := exec.Command(c.Path, c.Args...)
	cmd.Dir, cmd.Env = c.Dir, c.Env
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%s: %w: %s", c.Path, err, firstLine(stderr.String()))
	}
	if c.Check != nil {
		if err := c.Check(i, stdout.Bytes()); err != nil {
			return 0, fmt.Errorf("%s: %w", c.Path, err)
		}
	}
	return wall, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Series is the wall times of one measured case.
type Series struct {
	Name  string
	Times []time.Duration
	Err   error // why the case could not be measured
}

// Median returns the median time.
func (s *Series) Median() time.Duration { return Percentile(s.Times, 50) }

// P90 returns the 90th percentile.
func (s *Series) P90() time.Duration { return Percentile(s.Times, 90) }

// Percentile returns the nearest-rank p-th percentile of ts: the smallest
// time that at least p percent of ts do not exceed. For an even count the
// median is the lower middle.
func Percentile(ts []time.Duration, p float64) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	s := slices.Clone(ts)
	slices.Sort(s)
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	return s[max(rank, 1)-1]
}

// Case is one named command to measure.
type Case struct {
	Name string
	Cmd  *Cmd
}

// Interleave runs every case once per round, for warmup rounds that are
// not kept and then rounds that are: on a machine whose load changes during
// the run, every case sees the same changes, and a ratio of two medians
// compares like with like. A case that fails stops being run and reports
// its error.
func Interleave(cases []Case, warmup, rounds int) []Series {
	out := make([]Series, len(cases))
	for i, c := range cases {
		out[i].Name = c.Name
	}
	for r := range warmup + rounds {
		for i, c := range cases {
			if out[i].Err != nil {
				continue
			}
			d, err := c.Cmd.Run(r)
			if err != nil {
				out[i].Err = err
				continue
			}
			if r >= warmup {
				out[i].Times = append(out[i].Times, d)
			}
		}
	}
	return out
}

// Concurrently runs total jobs on workers goroutines, each job a call of
// run with its number, and returns the wall time of them all and the
// first error of a worker.
func Concurrently(workers, total int, run func(job int) error) (time.Duration, error) {
	jobs := make(chan int, total)
	for j := range total {
		jobs <- j
	}
	close(jobs)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			for j := range jobs {
				if err := run(j); err != nil && errs[w] == nil {
					errs[w] = err
				}
			}
		})
	}
	wg.Wait()
	return time.Since(start), cmp.Or(errs...)
}
