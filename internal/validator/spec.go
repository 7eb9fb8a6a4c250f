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
	// Diff, when set, is a check on what changed since the prompt was
	// armed, against the records Baselines (diff.go).
	Diff      *baseline.Check
	Baselines []string
	Skip      []string // dirs a diff check does not look in: the state dir
	// Judge, when set, is a check a model decides (judge.go): it runs
	// after the other specs, whose output it may read.
	Judge *Judge
}

// timeout is the spec's timeout, DefaultTimeout when it sets none.
func (s Spec) timeout() time.Duration { return cmp.Or(max(s.Timeout, 0), DefaultTimeout) }

// Env is where specs run.
type Env struct {
	Dir string // project root: the working directory and base of File paths
	// Vars are added to the process environment of every Run.
	Vars []string
	// OutputLimit bounds the bytes of output kept per check (default 64 KiB);
	// the rest is counted and dropped, so a runaway validator cannot take
	// the gate's memory.
	OutputLimit int
	// Output is what is kept past OutputLimit: OutputFailures keeps the
	// first lines, failing lines and the last bytes; "" or OutputHead the
	// first bytes (failures.go).
	Output string
	// Confine, when set, runs every Run inside bubblewrap with the
	// protected set read-only (confine.go).
	Confine *Confinement
	// Deadline, when set, is when every Run still running is killed and
	// reported timed out, whatever its own timeout: the gate must answer
	// before the client's hook timeout. DeadlineWhy says so in the result.
	Deadline    time.Time
	DeadlineWhy string
	// FailFast stops the checks still running once one fails: the run
	// ones only after every file check passed, and each stopped one
	// reports Stopped ([settings] fail_fast).
	FailFast bool
	// Ask puts a judge's question to its model (modelapi.Ask); nil makes
	// every judge unavailable, never a pass. Judges run in the gate, never
	// in the sandbox's runner, so it is not sent there.
	Ask func(ctx context.Context, api, endpoint, model, key, system, user string) (text string, in, out int, err error) `json:"-"`
}

// outputLimit is OutputLimit, its default when unset.
func (e Env) outputLimit() int { return cmp.Or(max(e.OutputLimit, 0), defaultOutputLimit) }

// Result is the outcome of one Spec.
type Result struct {
	Name     string
	Passed   bool
	Output   string // what the check said: the command's output, or the file's failures
	Dropped  int64  // bytes of output beyond the limit
	Problem  string // why it could not judge, e.g. "timed out after 10s"; "" otherwise
	ExitCode int    // for Run: the exit code, -1 when killed or not started
	// Unconfined is a Run that was not run: it had to be confined and
	// could not be. The gate halts on it rather than judge without it.
	Unconfined bool
	// Confined is a Run that ran inside bubblewrap; TimedOut one killed
	// at its timeout. For the outcome log and telemetry.
	Confined bool
	TimedOut bool
	// Stopped is a check not run to its end, or not at all: another
	// failed first and Env.FailFast stopped it. It did not pass.
	Stopped  bool
	Duration time.Duration
	// Unavailable is a judge that gave no verdict it could verify: no
	// pass, and no failure of the work either; Problem says why. Usage is
	// a judge's tokens (judge.go).
	Unavailable bool
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

// Lines returns at most n lines of the result's output, from its start,
// and a note of how much more there was, for feedback that must stay short.
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

// note is the line that says how many lines of the output were not shown
// and how many bytes were past its limit; none when nothing was left out.
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
