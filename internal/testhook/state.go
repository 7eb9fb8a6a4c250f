package testhook

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/validator"
)

// Mode is where a run is in its life.
type Mode string

// The modes of a run.
const (
	Running   Mode = "running"
	Completed Mode = "completed"
	Aborted   Mode = "aborted"
)

// Status is a test's outcome.
type Status string

// The outcomes of a test.
const (
	Passed  Status = "passed"
	Failed  Status = "failed"
	Skipped Status = "skipped"
)

// Var is a saved variable and the test that saved it.
type Var struct {
	Value string `json:"value"`
	Test  string `json:"test"`
}

// Filters choose the tests of a run: a test is in when its category is one
// of Categories (if any) and it has one of Tags (if any).
type Filters struct {
	Categories []string `json:"categories,omitempty"`
	Tags       []string `json:"tags,omitempty"`
}

func (f Filters) match(t *Test) bool {
	if len(f.Categories) > 0 && !slices.Contains(f.Categories, t.Category) {
		return false
	}
	if len(f.Tags) == 0 {
		return true
	}
	return slices.ContainsFunc(t.Tags, func(tag string) bool { return slices.Contains(f.Tags, tag) })
}

func (f Filters) String() string {
	var parts []string
	if len(f.Categories) > 0 {
		parts = append(parts, "category "+strings.Join(f.Categories, " or "))
	}
	if len(f.Tags) > 0 {
		parts = append(parts, "tag "+strings.Join(f.Tags, " or "))
	}
	return orNone(parts)
}

// Result is one test's recorded outcome.
type Result struct {
	Status   Status    `json:"status"`
	Failures []string  `json:"failures,omitempty"`
	Reason   string    `json:"reason,omitempty"` // why it was skipped
	Answer   string    `json:"answer,omitempty"` // what was checked, clipped
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
}

// Duration is how long the test took: from when it was handed out (or
// became current) to its result.
func (r *Result) Duration() time.Duration {
	return max(r.Finished.Sub(r.Started), 0)
}

// StateVersion is the format of the run file; a run written by another
// format is refused rather than misread.
const StateVersion = 1

// State is one session's run: the queued plan, the results appended to it,
// and where it stands. It is stored as one file, rewritten crash-safe under
// the state dir's lock.
type State struct {
	Version     int       `json:"version"`
	Session     string    `json:"session"`
	File        string    `json:"file"` // the tests file, relative to the root when inside it
	Description string    `json:"description,omitempty"`
	Report      string    `json:"report"` // report.md, relative to the root when inside it
	Auto        bool      `json:"auto"`
	Filters     Filters   `json:"filters"`
	Mode        Mode      `json:"mode"`
	Tests       []Test    `json:"tests"`   // the plan, in file order
	Results     []*Result `json:"results"` // by plan index; null until recorded
	Tries       []int     `json:"tries"`   // results recorded per test, retries included
	Current     int       `json:"current"` // plan index; len(Tests) when none is left
	// Issued says the current test was handed to the agent, Since when it
	// was handed out or became current: its result's start.
	Issued bool      `json:"issued"`
	Since  time.Time `json:"since"`
	// Turn is the prompt_id of the turn the current test was handed out
	// in, when a hook handed it out: a stop of another turn (the person
	// asked the agent something else) is not the test's answer.
	Turn string `json:"turn,omitempty"`
	// Answer is the agent's last message after the current test was handed
	// out, kept at Stop in a manual run for "validate" without text.
	Answer string         `json:"answer,omitempty"`
	Vars   map[string]Var `json:"vars"`
	// Streak counts the consecutive stops this run blocked in the current
	// turn; Paused says the run stopped blocking before the client's cap.
	Streak    int       `json:"streak"`
	Paused    bool      `json:"paused,omitempty"`
	Pauses    []int     `json:"pauses,omitempty"` // plan indexes after which an auto run paused
	Started   time.Time `json:"started"`
	Completed time.Time `json:"completed,omitzero"`
}

// newState queues the plan of tests and makes the first test current.
func newState(session string, s *Suite, tests []Test, f Filters, report string, auto bool, now time.Time) *State {
	st := &State{
		Version: StateVersion, Session: session, File: s.File, Description: s.Description,
		Report: report, Auto: auto, Filters: f, Mode: Running, Tests: tests,
		Results: make([]*Result, len(tests)), Tries: make([]int, len(tests)),
		Vars: map[string]Var{}, Started: now,
	}
	st.advance(now)
	return st
}

// check reports whether the state is whole: a file from another format or
// a hand edit must not index out of range.
func (st *State) check() error {
	switch {
	case st.Version != StateVersion:
		return fmt.Errorf("run format %d, want %d", st.Version, StateVersion)
	case len(st.Results) != len(st.Tests) || len(st.Tries) != len(st.Tests):
		return fmt.Errorf("%d results and %d tries for %d tests", len(st.Results), len(st.Tries), len(st.Tests))
	case st.Current < 0 || st.Current > len(st.Tests):
		return fmt.Errorf("current test %d of %d", st.Current, len(st.Tests))
	}
	if st.Vars == nil {
		st.Vars = map[string]Var{}
	}
	return nil
}

// driving is how the run goes on from test to test: "auto" or "manual".
func (st *State) driving() string {
	if st.Auto {
		return "auto"
	}
	return "manual"
}

// current returns the current test, or nil when none is left.
func (st *State) current() *Test {
	if st.Mode != Running || st.Current >= len(st.Tests) {
		return nil
	}
	return &st.Tests[st.Current]
}

// Counts of a run's tests by outcome, and the time they took.
type Counts struct {
	Passed, Failed, Skipped, NotRun int
	Time                            time.Duration // the results' durations, summed
}

// Total is every test in the plan.
func (c Counts) Total() int { return c.Passed + c.Failed + c.Skipped + c.NotRun }

func (c Counts) String() string {
	s := fmt.Sprintf("%d passed, %d failed, %d skipped", c.Passed, c.Failed, c.Skipped)
	if c.NotRun > 0 {
		s += fmt.Sprintf(", %d to go", c.NotRun)
	}
	return s
}

func (st *State) counts() Counts {
	var c Counts
	for _, r := range st.Results {
		c.add(r)
	}
	return c
}

// add counts one test's result; nil is a test not run yet.
func (c *Counts) add(r *Result) {
	if r == nil {
		c.NotRun++
		return
	}
	c.Time += r.Duration()
	switch r.Status {
	case Passed:
		c.Passed++
	case Failed:
		c.Failed++
	default:
		c.Skipped++
	}
}

// advance makes the first test without a result current. A test whose
// variables were never saved (the saving test failed or was skipped) cannot
// run: it is recorded as skipped, saying why, and the run goes on. When no
// test is left the run is completed. It returns the tests it skipped.
func (st *State) advance(now time.Time) (skipped []int) {
	st.Issued, st.Turn, st.Answer, st.Since = false, "", "", now
	for i := range st.Tests {
		if st.Results[i] != nil {
			continue
		}
		if why := st.whyMissing(&st.Tests[i]); why != "" {
			st.record(i, &Result{Status: Skipped, Reason: why, Started: now, Finished: now})
			skipped = append(skipped, i)
			continue
		}
		st.Current = i
		return skipped
	}
	st.Current, st.Mode, st.Completed = len(st.Tests), Completed, now
	return skipped
}

// whyMissing says which variables t uses are not saved, and why; "" when
// none is missing.
func (st *State) whyMissing(t *Test) string {
	var parts []string
	for _, n := range t.refs() {
		if _, ok := st.Vars[n]; ok {
			continue
		}
		switch i := saverOf(st.Tests, n); {
		case i < 0:
			parts = append(parts, fmt.Sprintf("${%s} is saved by no test of this run", n))
		case st.Results[i] == nil:
			parts = append(parts, fmt.Sprintf("${%s} is not saved yet: test %q has not run", n, st.Tests[i].ID))
		default:
			parts = append(parts, fmt.Sprintf("${%s} was not saved: test %q %s", n, st.Tests[i].ID, st.Results[i].Status))
		}
	}
	return strings.Join(parts, "; ")
}

func (st *State) record(i int, r *Result) {
	st.Results[i] = r
	st.Tries[i]++
}

// handout is the current test as handed to the agent: its line and its
// action with the variables substituted.
func (st *State) handout() string {
	t := st.current()
	action, _ := substitute(t.Action, st.Vars, false)
	return st.testLine(st.Current) + "\n\n" + strings.TrimSpace(action)
}

// testLine is "Test i/N: id — description".
func (st *State) testLine(i int) string {
	t := &st.Tests[i]
	s := fmt.Sprintf("Test %d/%d: %s", i+1, len(st.Tests), t.ID)
	if t.Description != "" {
		s += " — " + t.Description
	}
	return s
}

// judge checks answer against the current test with the shared validator
// engine, and captures its saves.
func (st *State) judge(answer string) (whys []string, saved map[string]Var) {
	t := st.current()
	var xs []validator.Expectation
	for _, e := range t.Expect {
		pattern, _ := substitute(e.Pattern, st.Vars, e.Kind == validator.Regex)
		x, err := validator.NewExpectation(e.Kind, pattern)
		if err != nil {
			whys = append(whys, err.Error())
			continue
		}
		xs = append(xs, x)
	}
	whys = append(whys, validator.CheckAll(answer, xs)...)
	saved, sw := capture(answer, t.Save, st.Vars, t.ID)
	return append(whys, sw...), saved
}

// validate records answer as the current test's result, saving its
// variables when it passes, and moves on. It returns the index of the test
// judged and the tests skipped on the way.
func (st *State) validate(answer string, now time.Time) (int, []int) {
	i := st.Current
	whys, saved := st.judge(answer)
	r := &Result{Status: Passed, Failures: whys, Answer: cli.Clip(answer, maxAnswer, clipped), Started: st.Since, Finished: now}
	if len(whys) > 0 {
		r.Status = Failed
	} else {
		maps.Copy(st.Vars, saved)
	}
	st.record(i, r)
	return i, st.advance(now)
}

// skip records the current test as skipped by the user.
func (st *State) skip(now time.Time) (int, []int) {
	i := st.Current
	st.record(i, &Result{Status: Skipped, Reason: "skipped by the user", Started: st.Since, Finished: now})
	return i, st.advance(now)
}

// retry clears test i's result, and the variables it saved, so that it is
// run again; a completed run is running again.
func (st *State) retry(i int, now time.Time) (skipped []int) {
	st.Results[i] = nil
	maps.DeleteFunc(st.Vars, func(_ string, v Var) bool { return v.Test == st.Tests[i].ID })
	st.Mode, st.Completed, st.Paused = Running, time.Time{}, false
	return st.advance(now)
}

// lastRetryable returns the most recently finished failed test, else the
// most recently skipped one, or -1: a failure is what one retries.
func (st *State) lastRetryable() int {
	for _, want := range []Status{Failed, Skipped} {
		best := -1
		for i, r := range st.Results {
			if r != nil && r.Status == want && (best < 0 || !r.Finished.Before(st.Results[best].Finished)) {
				best = i
			}
		}
		if best >= 0 {
			return best
		}
	}
	return -1
}

func (st *State) index(id string) int {
	return slices.IndexFunc(st.Tests, func(t Test) bool { return t.ID == id })
}

// maxAnswer bounds the answer kept with a result, for the report.
const maxAnswer = 4000

// clipped marks an answer cut to maxAnswer or maxKept.
const clipped = "\n… (clipped)"

// Runs live beside the gate's queue, under the same lock and written the
// same crash-safe way:
//
//	<state dir>/runs/<session>/run.json   one session's run: plan, results, vars
//
// A session has at most one run; starting another replaces it.

// runFile returns where session's run is kept, without touching the disk.
func runFile(stateDir, session string) string {
	return filepath.Join(stateDir, "runs", queue.Segment(session), "run.json")
}

// Store is the runs of one state dir; the first write creates it.
type Store struct{ dir string }

// loadRun returns the run in path, or nil when there is none. It needs no
// lock: the file is replaced whole.
func loadRun(path string) (*State, error) {
	var st State
	if err := queue.ReadJSON(path, &st); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, unreadable(path, err)
	}
	if err := st.check(); err != nil {
		return nil, unreadable(path, err)
	}
	return &st, nil
}

// unreadable is a run file that cannot be used: a new run replaces it.
func unreadable(path string, err error) error {
	return cli.WithHint(fmt.Errorf("run %s is unreadable: %w", path, err), "start a new run with testhook init, or /run-tests in Claude Code")
}

// Update changes session's run under the lock: f gets the run (nil when
// there is none) and returns the run to write, or nil to write nothing.
// It returns the run as it now is. An unreadable run is an error: only
// Replace overwrites it.
func (s *Store) Update(session string, f func(*State) (*State, error)) (*State, error) {
	var out *State
	err := s.locked(session, func(path string) error {
		old, err := loadRun(path)
		if err != nil {
			return err
		}
		st, err := f(old)
		if err != nil {
			return err
		}
		if out = st; st == nil {
			out = old
			return nil
		}
		return queue.WriteJSON(path, st)
	})
	return out, err
}

// Replace makes st session's run, and returns the run it replaced, if that
// was readable.
func (s *Store) Replace(session string, st *State) (old *State, err error) {
	err = s.locked(session, func(path string) error {
		old, _ = loadRun(path)
		return queue.WriteJSON(path, st)
	})
	return old, err
}

func (s *Store) locked(session string, f func(path string) error) error {
	path := runFile(s.dir, session)
	return queue.NewLock(filepath.Join(s.dir, queue.LockName)).Do(func() error {
		dir := filepath.Dir(path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		queue.Sweep(dir, queue.Temps)
		return f(path)
	})
}

// sessions returns the sessions that have a run in stateDir, sorted.
func sessions(stateDir string) ([]string, error) {
	des, err := os.ReadDir(filepath.Join(stateDir, "runs"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, de := range des {
		if _, err := os.Stat(filepath.Join(stateDir, "runs", de.Name(), "run.json")); err == nil {
			out = append(out, queue.Unsegment(de.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}

// Variables: a test's save captures group 1 of a regex in its answer, and
// later tests use it as ${name} in their action and expectations. In a
// regex expectation the value is quoted, so it matches literally whatever
// characters it holds. Text that is not ${name} with a valid name, such as
// "$x" or "${1}", is left as written.

// namePattern is a variable's name: a letter or _, then letters, digits
// and _.
const namePattern = `[A-Za-z_][A-Za-z0-9_]*`

// Compiled on first use: testhook starts at every prompt and stop.
var (
	nameRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^` + namePattern + `$`) })
	refRE  = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{(` + namePattern + `)\}`) }) // group 1 is the name
)

// validName reports whether n can be a variable name.
func validName(n string) bool { return nameRE().MatchString(n) }

// refs returns the names s refers to, in order, repeats included.
func refs(s string) []string {
	var names []string
	for _, m := range refRE().FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	return names
}

// substitute replaces each ${name} in s with its value, quoted for a regex
// when quote is set. It returns the names it has no value for, left as
// written.
func substitute(s string, vars map[string]Var, quote bool) (string, []string) {
	var missing []string
	out := refRE().ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		v, ok := vars[name]
		switch {
		case !ok:
			if !slices.Contains(missing, name) {
				missing = append(missing, name)
			}
			return ref
		case quote:
			return regexp.QuoteMeta(v.Value)
		}
		return v.Value
	})
	return out, missing
}

// capture applies t's saves to answer. It returns the captured values and,
// for each save whose regex does not match, why: a later test needs the
// value, so a missing one fails the test.
func capture(answer string, saves []Save, vars map[string]Var, test string) (map[string]Var, []string) {
	got := map[string]Var{}
	var whys []string
	for _, s := range saves {
		pattern, _ := substitute(s.Regex, vars, true)
		re, err := regexp.Compile(pattern)
		if err != nil {
			whys = append(whys, fmt.Sprintf("cannot save ${%s}: regex %s does not compile: %v", s.Var, pattern, err))
			continue
		}
		m := re.FindStringSubmatch(answer)
		if len(m) < 2 {
			whys = append(whys, fmt.Sprintf("cannot save ${%s}: no match for regex %s", s.Var, pattern))
			continue
		}
		got[s.Var] = Var{Value: m[1], Test: test}
	}
	return got, whys
}
