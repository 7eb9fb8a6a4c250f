package testhook

import (
	"bytes"
	"cmp"
	"embed"
	"encoding/xml"
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
	"text/template"
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

// Mode is where a run is in its life; Status is a test's outcome.
type (
	Mode   string
	Status string
)

const (
	Running, Completed, Aborted Mode   = "running", "completed", "aborted"
	Passed, Failed, Skipped     Status = "passed", "failed", "skipped"
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
	Version     int            `json:"version"`
	Session     string         `json:"session"`
	File        string         `json:"file"` // the tests file, relative to the root when inside it
	Description string         `json:"description,omitempty"`
	Report      string         `json:"report"` // report.md, relative to the root when inside it
	Auto        bool           `json:"auto"`
	Filters     Filters        `json:"filters"`
	Mode        Mode           `json:"mode"`
	Tests       []Test         `json:"tests"`            // the plan, in file order
	Results     []*Result      `json:"results"`          // by plan index; null until recorded
	Tries       []int          `json:"tries"`            // results recorded per test, retries included
	Current     int            `json:"current"`          // plan index; len(Tests) when none is left
	Issued      bool           `json:"issued"`           // the current test was handed to the agent
	Since       time.Time      `json:"since"`            // when it was handed out or became current
	Turn        string         `json:"turn,omitempty"`   // the handout's prompt_id: a stop of another turn is no answer
	Answer      string         `json:"answer,omitempty"` // the agent's last, kept for a manual validate
	Vars        map[string]Var `json:"vars"`
	Streak      int            `json:"streak"`           // consecutive stops blocked in this turn
	Paused      bool           `json:"paused,omitempty"` // stopped blocking before the client's cap
	Pauses      []int          `json:"pauses,omitempty"` // plan indexes after which an auto run paused
	Started     time.Time      `json:"started"`
	Completed   time.Time      `json:"completed,omitzero"`
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

// current returns the current test, or nil when none is left.
func (st *State) current() *Test {
	if st.Mode != Running || st.Current >= len(st.Tests) {
		return nil
	}
	return &st.Tests[st.Current]
}

// Counts of a run's tests by outcome, and the time they took.
type Counts struct {
	Total, Passed, Failed, Skipped, NotRun int
	Time                                   time.Duration // the results' durations, summed
}

func (c Counts) String() string {
	s := fmt.Sprintf("%d passed, %d failed, %d skipped", c.Passed, c.Failed, c.Skipped)
	if c.NotRun > 0 {
		s += fmt.Sprintf(", %d to go", c.NotRun)
	}
	return s
}

// counts counts the results of the plan's tests idx; all of them when none.
func (st *State) counts(idx ...int) Counts {
	var c Counts
	for i, r := range st.Results {
		if len(idx) > 0 && !slices.Contains(idx, i) {
			continue
		}
		c.Total++
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
		var parts []string // the variables the test uses that are not saved, and why
		for _, n := range st.Tests[i].refs() {
			_, saved := st.Vars[n]
			switch i := saverOf(st.Tests, n); {
			case saved:
			case i < 0:
				parts = append(parts, fmt.Sprintf("${%s} is saved by no test of this run", n))
			case st.Results[i] == nil:
				parts = append(parts, fmt.Sprintf("${%s} is not saved yet: test %q has not run", n, st.Tests[i].ID))
			default:
				parts = append(parts, fmt.Sprintf("${%s} was not saved: test %q %s", n, st.Tests[i].ID, st.Results[i].Status))
			}
		}
		why := strings.Join(parts, "; ")
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

// handout is the current test's line and its action with the variables in.
func (st *State) handout() string {
	action := substitute(st.current().Action, st.Vars, false)
	return st.testLine(st.Current) + "\n\n" + strings.TrimSpace(action)
}

// testLine is "Test i/N: id — description".
func (st *State) testLine(i int) string {
	return joinSome(" — ", fmt.Sprintf("Test %d/%d: %s", i+1, len(st.Tests), st.Tests[i].ID), st.Tests[i].Description)
}

// validate checks answer against the current test, records the result; it returns the test judged and those skipped.
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

// loadRun returns the run in path, or nil, unless it would index out of range; no lock: the file is replaced whole.
func loadRun(path string) (*State, error) {
	var st State
	err := queue.ReadJSON(path, &st)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil: // said why
	case st.Version != StateVersion:
		err = fmt.Errorf("run format %d, want %d", st.Version, StateVersion)
	case len(st.Results) != len(st.Tests) || len(st.Tries) != len(st.Tests):
		err = fmt.Errorf("%d results and %d tries for %d tests", len(st.Results), len(st.Tries), len(st.Tests))
	case st.Current < 0 || st.Current > len(st.Tests):
		err = fmt.Errorf("current test %d of %d", st.Current, len(st.Tests))
	case st.Vars == nil:
		st.Vars = map[string]Var{}
	}
	if err != nil {
		return nil, cli.WithHint(fmt.Errorf("run %s is unreadable: %w", path, err), "start a new run with testhook init, or /run-tests in Claude Code")
	}
	return &st, nil
}

// update changes the session's run, which must exist, under the lock: f reports whether to write it.
func (r *runner) update(f func(*State) (bool, error)) (*State, error) {
	var st *State
	err := r.locked(func(path string) (err error) {
		if st, err = r.load(); err != nil {
			return err
		}
		if write, err := f(st); err != nil || !write {
			return err
		}
		return queue.WriteJSON(path, st)
	})
	return st, err
}

// locked runs f on the path of the session's run, holding the state dir's lock.
func (r *runner) locked(f func(path string) error) error {
	path := runFile(r.dir, r.session)
	return queue.Locked(filepath.Join(r.dir, queue.LockName), func() error {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		queue.Sweep(filepath.Dir(path), queue.Temps)
		return f(path)
	})
}

// refRE is a ${name} reference, name its group 1; compiled on first use: testhook starts at every prompt and stop.
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

// category is one of the plan's categories (or all: the total), its tests' indexes and their counts.
type category struct {
	Name  string
	Tests []int
	Counts
}

// categories returns the plan's categories in order of first use.
func (st *State) categories() []*category {
	var cats []*category
	for i, t := range st.Tests {
		j := slices.IndexFunc(cats, func(c *category) bool { return c.Name == t.Category })
		if j < 0 {
			j, cats = len(cats), append(cats, &category{Name: t.Category})
		}
		cats[j].Tests = append(cats[j].Tests, i)
	}
	for _, c := range cats {
		c.Counts = st.counts(c.Tests...)
	}
	return cats
}

// statusWord and mark show a result in text and in the report.
var statusWord, mark = map[Status]string{Passed: "PASS", Failed: "FAIL", Skipped: "SKIP"}, map[Status]string{Passed: "✔", Failed: "✘", Skipped: "-"}

// resultLine is "PASS id (i/N)", FAIL or SKIP.
func resultLine(st *State, i int) string {
	res := st.Results[i]
	return joinSome(": ", fmt.Sprintf("%s %s (%d/%d)", statusWord[res.Status], st.Tests[i].ID, i+1, len(st.Tests)), res.Reason)
}

// resultWhys is resultLine and a failed test's reasons, one a line.
func resultWhys(st *State, i int) string {
	return strings.Join(append([]string{resultLine(st, i)}, st.Results[i].Failures...), "\n  - ")
}

// textData is what texts.tmpl renders: the run, and what some texts add.
type textData struct {
	*State
	Old     *State   // start: the run it replaces
	Written []string // report: the files written
	Lead    string   // brief: what comes before the test
	Judged  int      // after: the test judged
	Skipped []int    // after: the tests skipped since
}

// say renders text name of texts.tmpl, the person's words, without a final line break.
func (r *runner) say(name string, d textData) string {
	b, err := r.render(name, d)
	if err != nil {
		panic(err) // a bug in texts.tmpl, which the tests render whole
	}
	return strings.TrimSuffix(string(b), "\n")
}

//go:embed texts.tmpl report.md.tmpl junit.xml.tmpl
var templates embed.FS

// render renders template name on d: a text of texts.tmpl (textData), or a report (*State).
func (r *runner) render(name string, d any) ([]byte, error) {
	funcs := template.FuncMap{
		"word": r.word, "blockCap": func() int { return r.blockCap },
		"plural": cli.Plural, "join": strings.Join, "joinSome": joinSome, "add": func(a, b int) int { return a + b },
		"resultWhys": resultWhys, "resultLine": resultLine, "handout": (*State).handout, "current": (*State).current,
		"testLine": (*State).testLine, "withStatus": (*State).withStatus, "categories": (*State).categories,
		"counts": (*State).counts, "total": func(st *State) category { return category{Name: "**total**", Counts: st.counts()} },
		"statusWord": func(s Status) string { return statusWord[s] }, "mark": func(s Status) string { return mark[s] },
		"pauses": r.pauses, "cell": cell, "dur": dur, "fenced": fenced, "xml": xmlText, "cdata": cdata,
		"seconds": func(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) },
	}
	var b bytes.Buffer
	err := template.Must(template.New("").Funcs(funcs).ParseFS(templates, "*.tmpl")).ExecuteTemplate(&b, name, d)
	return b.Bytes(), err
}

// pauses lists the tests after which an auto run of n pauses.
func (r *runner) pauses(n int) string {
	var at []string
	for i := r.blockCap; i < n; i += r.blockCap {
		at = append(at, fmt.Sprint(i))
	}
	return strings.Join(at, ", ")
}

// dur shows a duration to the millisecond.
func dur(d time.Duration) string {
	if d < time.Millisecond {
		return "0s"
	}
	return d.Round(time.Millisecond).String()
}

// cell keeps text inside one Markdown table cell.
func cell(s string) string { return cli.OneLine(strings.ReplaceAll(s, "|", `\|`)) }

// fenced puts text in a code block whose fence no line of it can close.
func fenced(s string) string {
	if strings.TrimSpace(s) == "" {
		return "(empty)\n"
	}
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + "text\n" + strings.TrimRight(s, "\n") + "\n" + fence + "\n"
}

func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a Builder does not fail
	return b.String()
}

// cdata is s as CDATA, a "]]>" inside split across two sections.
func cdata(s string) string {
	if s == "" {
		return ""
	}
	return "<![CDATA[" + strings.ReplaceAll(s, "]]>", "]]]]><![CDATA[>") + "]]>"
}
