// Package validator is the engine that runs stopgate's checks, for the gate and the test runner alike: a failure is a Result, never an error.
package validator

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/baseline"
)

// Spec is one check: a File that must meet Expect, a Run command, a Diff or a Judge.
type Spec struct {
	Name      string
	File      string // relative to Env.Dir unless absolute
	Expect    []Expectation
	Run       string
	Env       []string // extra KEY=value for Run, after Env.Vars
	Timeout   time.Duration
	Diff      *baseline.Check `json:"-"` // what changed since arming; never sent to the sandbox
	Baselines []string        // the records Diff compares with
	Skip      []string        // dirs a diff check does not look in: the state dir
	Judge     *Judge          // a model decides; runs after the others, may read their output
}

func (s Spec) timeout() time.Duration { return cmp.Or(max(s.Timeout, 0), DefaultTimeout) }

// Env is where specs run.
type Env struct {
	Dir         string       // project root: the working directory and base of File paths
	Vars        []string     // added to the environment of every Run
	OutputLimit int          // bytes kept per check (default 64 KiB): a runaway cannot take memory
	Output      string       // which: OutputFailures or OutputHead
	Confine     *Confinement // runs every Run in bubblewrap, the protected set read-only
	Deadline    time.Time    // kills every Run still running: the gate answers before the hook timeout
	DeadlineWhy string       // says so
	FailFast    bool         // [settings] fail_fast: the first failure stops the rest (Result.Stopped)
	// Ask puts a judge's question to its model (modelapi.Ask); nil: every judge unavailable.
	Ask   func(ctx context.Context, api, endpoint, model, key, system, user string) (text string, in, out int, err error) `json:"-"`
	boxed bool                                                                                                            // Run is the sandbox's runner: its pid namespace ends every validator, so no watchdog
}

func (e Env) outputLimit() int { return cmp.Or(max(e.OutputLimit, 0), defaultOutputLimit) }

// within is timeout cut to the time left to e.Deadline (1 ms at least), and DeadlineWhy if it was.
func (e Env) within(timeout time.Duration) (time.Duration, string) {
	if left := time.Until(e.Deadline); !e.Deadline.IsZero() && left < timeout {
		return max(left, time.Millisecond), e.DeadlineWhy
	}
	return timeout, ""
}

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

// Kind is an expectation kind, as written in mappings.toml and tests files.
type Kind string

const (
	Contains    Kind = "contains"
	NotContains Kind = "not_contains"
	Regex       Kind = "regex"
)

// Expectation is one condition on a text, made by NewExpectation (uncompiled as the test runner keeps it, before ${var}s).
type Expectation struct {
	Kind    Kind   `json:"kind"`
	Pattern string `json:"pattern"`
	re      *regexp.Regexp
}

// kinds are whether each kind wants its pattern found, and what a text that fails it says.
var kinds = map[Kind]struct {
	found bool
	why   string
}{Contains: {true, "does not contain %q"}, NotContains: {false, "contains %q, which it must not"}, Regex: {true, "does not match regex %s"}}

// NewExpectation checks and compiles an expectation.
func NewExpectation(kind Kind, pattern string) (x Expectation, err error) {
	x = Expectation{Kind: kind, Pattern: pattern}
	if _, ok := kinds[kind]; !ok {
		return x, fmt.Errorf("unknown expectation kind %q (want contains, not_contains or regex)", kind)
	}
	if kind == Regex {
		if x.re, err = regexp.Compile(pattern); err != nil {
			return x, fmt.Errorf("regex %q does not compile: %w", pattern, err)
		}
	}
	return x, nil
}

// MustExpectation is NewExpectation for patterns known to be valid.
func MustExpectation(kind Kind, pattern string) Expectation {
	x, err := NewExpectation(kind, pattern)
	if err != nil {
		panic(err)
	}
	return x
}

// CheckAll returns why text fails each expectation it does not meet; trailing line breaks go first: $ does not match before one.
func CheckAll(text string, xs []Expectation) []string {
	text = strings.TrimRight(text, "\r\n")
	var whys []string
	for _, x := range xs {
		k, known := kinds[x.Kind]
		found := strings.Contains(text, x.Pattern)
		if x.Kind == Regex { // compiled by NewExpectation, the only maker of a Regex
			found = x.re.MatchString(text)
		}
		switch {
		case !known:
			whys = append(whys, fmt.Sprintf("unknown expectation kind %q", x.Kind))
		case found != k.found:
			whys = append(whys, fmt.Sprintf(k.why, x.Pattern))
		}
	}
	return whys
}
