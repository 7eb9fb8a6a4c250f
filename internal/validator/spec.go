package validator

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/baseline"
)

// Spec is one check to run: a File that must exist and meet Expect, or a
// command Run with sh -c.
type Spec struct {
	Name    string
	File    string // relative to Env.Dir unless absolute
	Expect  []Expectation
	Run     string
	Env     []string // extra KEY=value for Run, after Env.Vars
	Timeout time.Duration
	// Diff checks what changed since arming against the records Baselines.
	Diff      *baseline.Check `json:"-"` // never sent to the sandbox's runner
	Baselines []string
	Skip      []string // dirs a diff check does not look in: the state dir
	Judge     *Judge   // a model decides; runs after the others, may read their output
}

func (s Spec) timeout() time.Duration { return cmp.Or(max(s.Timeout, 0), DefaultTimeout) }

// Env is where specs run.
type Env struct {
	Dir         string       // project root: the working directory and base of File paths
	Vars        []string     // added to the environment of every Run
	OutputLimit int          // bytes kept per check (default 64 KiB): a runaway cannot take memory
	Output      string       // which: OutputFailures or OutputHead
	Confine     *Confinement // runs every Run in bubblewrap, the protected set read-only
	// Deadline kills every Run still running, whatever its timeout: the
	// gate must answer before the client's hook timeout. DeadlineWhy says so.
	Deadline    time.Time
	DeadlineWhy string
	FailFast    bool // [settings] fail_fast: the first failure stops the rest (Result.Stopped)
	// Ask puts a judge's question to its model (modelapi.Ask); nil makes
	// every judge unavailable. Never sent to the sandbox's runner.
	Ask func(ctx context.Context, api, endpoint, model, key, system, user string) (text string, in, out int, err error) `json:"-"`
}

func (e Env) outputLimit() int { return cmp.Or(max(e.OutputLimit, 0), defaultOutputLimit) }

// Result is the outcome of one Spec.
type Result struct {
	Name        string
	Passed      bool
	Output      string // what the check said: the command's output, or the file's failures
	Dropped     int64  // bytes of output beyond the limit
	Problem     string // why it could not judge, e.g. "timed out after 10s"; "" otherwise
	ExitCode    int    // for Run: the exit code, -1 when killed or not started
	Unconfined  bool   // had to be confined and could not be: not run, the gate halts
	Confined    bool   // ran inside bubblewrap
	TimedOut    bool
	Stopped     bool // FailFast stopped it before its end: it did not pass
	Duration    time.Duration
	Unavailable bool // a judge with no verdict: no pass, no failure of the work
	Usage       *Usage
}

// Summary is the result in one line, for logs and status.
func (r Result) Summary() string {
	switch {
	case r.Passed:
		return "passed"
	case r.Problem != "":
		return r.Problem
	case r.ExitCode > 0:
		return fmt.Sprintf("exit status %d", r.ExitCode)
	}
	return "failed"
}

// Lines returns at most n lines of the output, from its start, and a note
// of how much more there was.
func (r Result) Lines(n int) []string {
	lines := r.lines()
	n = min(n, len(lines))
	return append(lines[:n:n], note(len(lines)-n, r.Dropped)...)
}

func (r Result) lines() []string {
	out := strings.TrimRight(r.Output, "\n")
	if out == "" {
		return nil
	}
	return strings.Split(out, "\n")
}

// note says how many lines were not shown and bytes were past the limit.
func note(lines int, dropped int64) []string {
	var more []string
	if lines > 0 {
		more = append(more, fmt.Sprintf("%d more lines", lines))
	}
	if dropped > 0 {
		more = append(more, fmt.Sprintf("%d more bytes (output is capped)", dropped))
	}
	if len(more) == 0 {
		return nil
	}
	return []string{"… " + strings.Join(more, " and ")}
}
