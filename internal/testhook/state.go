package testhook

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/validator"
)

// Suite is a loaded tests file.
type Suite struct {
	File        string // as shown to a person: relative to the project root when inside it
	Version     string
	Description string
	Tests       []Test
}

// Test is one test: an action for the agent, and what its answer must meet.
type Test struct {
	ID          string                  `json:"id"`
	Description string                  `json:"description,omitempty"`
	Category    string                  `json:"category"`
	Action      string                  `json:"action"`
	Expect      []validator.Expectation `json:"expect,omitempty"`
	Save        []Save                  `json:"save,omitempty"` // sorted by Var
	Tags        []string                `json:"tags,omitempty"`
	Line        int                     `json:"line,omitempty"` // in the tests file; 0 when unknown
}

// Save captures group 1 of Regex in the answer as ${Var}.
type Save struct {
	Var   string `json:"var"`
	Regex string `json:"regex"`
}

// DefaultCategory is the category of a test that names none.
const DefaultCategory = "general"

// testKey is a problem's Key for test id, as mappings.toml's read.
func testKey(id string) string { return fmt.Sprintf("test %q", id) }

// Mode is where a run is in its life.
type Mode string

const (
	Running   Mode = "running"
	Completed Mode = "completed"
	Aborted   Mode = "aborted"
)

// Status is a test's outcome.
type Status string

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

// Filters choose a run's tests: those of one of Categories (if any) with one of Tags (if any).
type Filters struct {
	Categories []string `json:"categories,omitempty"`
	Tags       []string `json:"tags,omitempty"`
}

func (f Filters) match(t *Test) bool {
	return (len(f.Categories) == 0 || slices.Contains(f.Categories, t.Category)) &&
		(len(f.Tags) == 0 || slices.ContainsFunc(t.Tags, func(tag string) bool { return slices.Contains(f.Tags, tag) }))
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

// Duration is the time from the test's handout (or becoming current) to its result.
func (r *Result) Duration() time.Duration { return max(r.Finished.Sub(r.Started), 0) }

// StateVersion is the format of the run file; another is refused, not misread.
const StateVersion = 1

// State is one session's run: the plan, the results, where it stands.
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
	Issued      bool      `json:"issued"`  // the current test was handed to the agent
	Since       time.Time `json:"since"`   // when it was handed out or became current
	// Turn is the prompt_id of the handout's turn: a stop of another is not the answer.
	Turn      string         `json:"turn,omitempty"`
	Answer    string         `json:"answer,omitempty"` // the agent's last, kept for a manual validate
	Vars      map[string]Var `json:"vars"`
	Streak    int            `json:"streak"`           // consecutive stops blocked in this turn
	Paused    bool           `json:"paused,omitempty"` // stopped blocking before the client's cap
	Pauses    []int          `json:"pauses,omitempty"` // plan indexes after which an auto run paused
	Started   time.Time      `json:"started"`
	Completed time.Time      `json:"completed,omitzero"`
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

// check refuses a state that would index out of range (a hand edit).
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

// Total is every test counted.
func (c Counts) Total() int { return c.Passed + c.Failed + c.Skipped + c.NotRun }

func (c Counts) String() string {
	s := fmt.Sprintf("%d passed, %d failed, %d skipped", c.Passed, c.Failed, c.Skipped)
	if c.NotRun > 0 {
		s += fmt.Sprintf(", %d to go", c.NotRun)
	}
	return s
}

// counts counts the results of the plan's tests idx; all of them when nil.
func (st *State) counts(idx ...int) Counts {
	var c Counts
	for i, r := range st.Results {
		if idx != nil && !slices.Contains(idx, i) {
			continue
		}
		switch {
		case r == nil:
			c.NotRun++
			continue
		case r.Status == Passed:
			c.Passed++
		case r.Status == Failed:
			c.Failed++
		default:
			c.Skipped++
		}
		c.Time += r.Duration()
	}
	return c
}

// advance makes the first test without a result current, skipping those whose variables were not saved.
func (st *State) advance(now time.Time) (skipped []int) {
	st.Issued, st.Turn, st.Answer, st.Since = false, "", "", now
	for i := range st.Tests {
		if st.Results[i] != nil {
			continue
		}
		why := st.whyMissing(&st.Tests[i])
		if why == "" {
			st.Current = i
			return skipped
		}
		st.Results[i] = &Result{Status: Skipped, Reason: why, Started: now, Finished: now}
		st.Tries[i]++
		skipped = append(skipped, i)
	}
	st.Current, st.Mode, st.Completed = len(st.Tests), Completed, now
	return skipped
}

// whyMissing says which variables t uses are not saved, and why.
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

// handout is the current test's line and its action with the variables in.
func (st *State) handout() string {
	action := substitute(st.current().Action, st.Vars, false)
	return st.testLine(st.Current) + "\n\n" + strings.TrimSpace(action)
}

// testLine is "Test i/N: id — description".
func (st *State) testLine(i int) string {
	return joinSome(" — ", fmt.Sprintf("Test %d/%d: %s", i+1, len(st.Tests), st.Tests[i].ID), st.Tests[i].Description)
}

// validate checks answer against the current test as the gate's validators check, records the
// result and, if it passed, its captures; it returns the test judged and those skipped.
func (st *State) validate(answer string, now time.Time) (int, []int) {
	t := st.current()
	var whys []string
	var xs []validator.Expectation
	for _, e := range t.Expect {
		x, err := validator.NewExpectation(e.Kind, substitute(e.Pattern, st.Vars, e.Kind == validator.Regex))
		if err != nil {
			whys = append(whys, err.Error())
			continue
		}
		xs = append(xs, x)
	}
	saved, sw := capture(answer, t.Save, st.Vars, t.ID)
	whys = append(append(whys, validator.CheckAll(answer, xs)...), sw...)
	r := &Result{Status: Passed, Failures: whys, Answer: cli.Clip(answer, maxAnswer, clipped)}
	if len(whys) > 0 {
		r.Status = Failed
	} else {
		maps.Copy(st.Vars, saved)
	}
	return st.finish(r, now)
}

// finish records r as the current test's result and moves on.
func (st *State) finish(r *Result, now time.Time) (int, []int) {
	i := st.Current
	st.Results[i], r.Started, r.Finished = r, st.Since, now
	st.Tries[i]++
	return i, st.advance(now)
}

// lastRetryable returns the most recently finished failed test, else skipped one, or -1.
func (st *State) lastRetryable() int {
	for _, want := range []Status{Failed, Skipped} {
		if idx := st.withStatus(want); len(idx) > 0 {
			return slices.MaxFunc(idx, func(a, b int) int { // the later test on a tie
				return cmp.Or(st.Results[a].Finished.Compare(st.Results[b].Finished), cmp.Compare(a, b))
			})
		}
	}
	return -1
}

// withStatus returns the plan indexes of the tests whose result is s.
func (st *State) withStatus(s Status) []int {
	var out []int
	for i, r := range st.Results {
		if r != nil && r.Status == s {
			out = append(out, i)
		}
	}
	return out
}

func (st *State) index(id string) int {
	return slices.IndexFunc(st.Tests, func(t Test) bool { return t.ID == id })
}

const (
	maxAnswer = 4000            // the answer kept with a result, for the report
	maxKept   = 1 << 20         // the answer kept at Stop for a later validate
	clipped   = "\n… (clipped)" // marks an answer cut to either
)

// runFile is where session's run is kept, beside the gate's queue, under its lock.
func runFile(stateDir, session string) string {
	return filepath.Join(stateDir, "runs", queue.Segment(session), "run.json")
}

// loadRun returns the run in path, or nil; no lock: the file is replaced whole.
func loadRun(path string) (*State, error) {
	var st State
	err := queue.ReadJSON(path, &st)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err == nil {
		err = st.check()
	}
	if err != nil {
		return nil, cli.WithHint(fmt.Errorf("run %s is unreadable: %w", path, err), "start a new run with testhook init, or /run-tests in Claude Code")
	}
	return &st, nil
}

// update changes the session's run, which must exist, under the lock: f returns the run to write, or nil.
func (r *runner) update(f func(*State) (*State, error)) (*State, error) {
	var st *State
	err := r.locked(func(path string) error {
		old, err := r.load()
		if err != nil {
			return err
		}
		if st, err = f(old); err != nil || st == nil {
			st = old
			return err
		}
		return queue.WriteJSON(path, st)
	})
	return st, err
}

// locked runs f on the path of the session's run, holding the state dir's lock.
func (r *runner) locked(f func(path string) error) error {
	path := runFile(r.dir, r.session)
	return queue.NewLock(filepath.Join(r.dir, queue.LockName)).Do(func() error {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		queue.Sweep(filepath.Dir(path), queue.Temps)
		return f(path)
	})
}

// refRE is a ${name} reference, its group 1 a letter or _, then letters, digits and _;
// compiled on first use: testhook starts at every prompt and stop.
var refRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`) })

// validName reports whether n can be a variable name: ${n} refers to n alone.
func validName(n string) bool { return slices.Equal(refs("${"+n+"}"), []string{n}) }

// refs returns the names s refers to, in order, repeats included.
func refs(s string) []string {
	var names []string
	for _, m := range refRE().FindAllStringSubmatch(s, -1) {
		names = append(names, m[1])
	}
	return names
}

// refs returns the ${var} names t uses, in order of first use.
func (t *Test) refs() []string {
	texts := []string{t.Action}
	for _, x := range t.Expect {
		texts = append(texts, x.Pattern)
	}
	for _, s := range t.Save {
		texts = append(texts, s.Regex)
	}
	var names []string
	for _, n := range refs(strings.Join(texts, "\n")) { // no ${name} spans a line break
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names
}

// saverOf returns the index of the first of tests that saves name, or -1.
func saverOf(tests []Test, name string) int {
	return slices.IndexFunc(tests, func(t Test) bool {
		return slices.ContainsFunc(t.Save, func(s Save) bool { return s.Var == name })
	})
}

// unsaved calls f with each ${name} that tests[i] uses and no earlier test saves.
func unsaved(tests []Test, f func(i int, name string)) {
	saved := map[string]bool{}
	for i := range tests {
		for _, n := range tests[i].refs() {
			if !saved[n] {
				f(i, n)
			}
		}
		for _, s := range tests[i].Save {
			saved[s.Var] = true
		}
	}
}

// substitute replaces each ${name} in s that has a value with it, quoted for a regex if quote.
func substitute(s string, vars map[string]Var, quote bool) string {
	return refRE().ReplaceAllStringFunc(s, func(ref string) string {
		v, ok := vars[ref[2:len(ref)-1]]
		switch {
		case !ok:
			return ref
		case quote:
			return regexp.QuoteMeta(v.Value)
		}
		return v.Value
	})
}

// capture applies saves to answer: the values, and why each save that does not match fails the test.
func capture(answer string, saves []Save, vars map[string]Var, test string) (map[string]Var, []string) {
	got := map[string]Var{}
	var whys []string
	for _, s := range saves {
		pattern := substitute(s.Regex, vars, true)
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
