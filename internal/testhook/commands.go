package testhook

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
)

// start queues the tests file's tests that the filters choose as the session's run.
func (r *runner) start(req request) (reply, error) {
	path, err := r.testsFile(req.file)
	if err != nil {
		return reply{}, cli.WithHint(err, "write one (see docs/testhook.md), or name it with --file")
	}
	suite, err := Load(path, r.root)
	if ps, ok := errors.AsType[config.Problems](err); ok {
		return reply{}, cli.WithHint(fmt.Errorf("%s: %s", project.Display(r.root, path), cli.Plural(len(ps), "mistake", "mistakes")), ps.Lines()...)
	} else if err != nil {
		return reply{}, err
	}
	f := req.filters
	tests, err := selectTests(suite, f)
	if err != nil {
		return reply{}, err
	}
	now := utcNow()
	report := project.Display(r.root, filepath.Join(filepath.Dir(path), "report.md"))
	st := newState(r.session, suite, tests, f, report, req.auto, now)
	ctx := ""
	if req.auto && r.hook {
		// The slash command's turn carries the first test: the agent
		// starts at once, and every stop after it is an answer.
		st.Issued, st.Turn = true, r.turn
		ctx = r.brief(st, "")
	}
	var old *State
	err = locked(r.dir, r.session, func(path string) error {
		old, _ = loadRun(path) // replaced, readable or not
		return queue.WriteJSON(path, st)
	})
	return reply{text: r.startText(st, old), context: ctx}, err
}

// selectTests keeps the tests the filters match, unless one needs a
// variable only a left-out test saves.
func selectTests(s *Suite, f Filters) ([]Test, error) {
	tests := slices.DeleteFunc(slices.Clone(s.Tests), func(t Test) bool { return !f.match(&t) })
	if len(tests) == 0 {
		var cats, tags []string
		for _, t := range s.Tests {
			cats = append(cats, t.Category)
			tags = append(tags, t.Tags...)
		}
		return nil, cli.WithHint(fmt.Errorf("no test of %s matches the filters (%s)", s.File, f),
			"categories: "+orNone(cats), "tags: "+orNone(tags))
	}
	var ps config.Problems
	unsaved(tests, func(i int, n string) {
		if j := saverOf(s.Tests, n); j >= 0 {
			t, u := &tests[i], &s.Tests[j]
			ps = append(ps, &config.Problem{File: s.File, Line: t.Line, Key: testKey(t.ID),
				Msg:  fmt.Sprintf("uses ${%s}, saved by test %q, which the filters leave out", n, u.ID),
				Hint: fmt.Sprintf("add --category %s, or choose filters that keep %q", u.Category, u.ID)})
		}
	})
	if len(ps) > 0 {
		return nil, cli.WithHint(fmt.Errorf("%s: the filters (%s) break a variable chain", s.File, f), ps.Lines()...)
	}
	return tests, nil
}

// orNone lists s, sorted and without repeats, or says "none".
func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	slices.Sort(s)
	return strings.Join(slices.Compact(s), ", ")
}

// next hands out the current test; asking again changes nothing.
func (r *runner) next(request) (reply, error) {
	st, err := r.load()
	if err == nil && !r.handedOut(st) {
		st, err = r.update(r.handOut)
	}
	if err != nil {
		return reply{}, err
	}
	if st.current() == nil {
		return reply{text: r.endText(st)}, nil
	}
	return reply{text: st.handout(), context: r.brief(st, "")}, nil
}

// handedOut reports whether next would change nothing.
func (r *runner) handedOut(st *State) bool {
	return st.current() == nil || st.Issued && !st.Paused && st.Streak == 0 && st.Turn == r.turn
}

func (r *runner) handOut(st *State) (*State, error) {
	if r.handedOut(st) {
		return nil, nil // handed out since we looked
	}
	if !st.Issued {
		st.Since = utcNow()
	}
	// The person asked: a new turn, whose blocked stops count from 0.
	st.Issued, st.Turn, st.Paused, st.Streak = true, r.turn, false, 0
	return st, nil
}

// record skips the current test or validates req's text (else the agent's last answer).
func (r *runner) record(req request) (reply, error) {
	now := utcNow()
	var judged int
	var skipped []int
	st, err := r.update(func(st *State) (*State, error) {
		t := st.current()
		switch {
		case t == nil:
			return nil, r.noCurrent(st)
		case req.name == "skip":
			judged, skipped = st.finish(&Result{Status: Skipped, Reason: "skipped by the user"}, now)
		case req.hasText:
			judged, skipped = st.validate(req.text, now)
		case st.Answer != "":
			judged, skipped = st.validate(st.Answer, now)
		default:
			return nil, usageError(fmt.Sprintf("validate needs the answer to check: no answer from the agent is kept for test %q; use %s TEXT", t.ID, r.word("validate")))
		}
		return st, nil
	})
	if err != nil {
		return reply{}, err
	}
	return reply{text: r.afterResult(st, judged, skipped)}, nil
}

// retry runs the test named, else the last failed, else the last skipped, again.
func (r *runner) retry(req request) (reply, error) {
	now, args := utcNow(), req.args
	var skipped []int
	st, err := r.update(func(st *State) (*State, error) {
		if st.Mode == Aborted {
			return nil, r.noCurrent(st)
		}
		i := st.lastRetryable()
		if len(args) == 1 {
			if i = st.index(args[0]); i < 0 {
				return nil, fmt.Errorf("no test %q in this run", args[0])
			}
			if st.Results[i] == nil {
				return nil, fmt.Errorf("test %q has not run yet", args[0])
			}
		} else if i < 0 {
			return nil, errors.New("nothing to retry: no test failed or was skipped")
		}
		skipped = st.retry(i, now)
		return st, nil
	})
	if err != nil {
		return reply{}, err
	}
	if len(skipped) == 0 {
		return reply{text: fmt.Sprintf("%s will run again.\nType %s for it.", st.testLine(st.Current), r.word("next"))}, nil
	}
	// It still lacks a variable: skipped again, saying why.
	return reply{text: resultLines(st, skipped, "")[1:] + "\n" + r.upNext(st)}, nil
}

// abort ends the run where it stands.
func (r *runner) abort(request) (reply, error) {
	now := utcNow()
	st, err := r.update(func(st *State) (*State, error) {
		if st.Mode != Running {
			return nil, fmt.Errorf("the run is already %s", st.Mode)
		}
		st.Mode, st.Completed, st.Issued, st.Paused = Aborted, now, false, false
		return st, nil
	})
	if err != nil {
		return reply{}, err
	}
	return reply{text: fmt.Sprintf("Aborted the run of %s: %s.\n%s writes the report of what ran.", st.File, st.counts(), r.word("report"))}, nil
}

// show answers status or vars: text of the run as it stands.
func show(text func(*runner, *State) string) func(*runner, request) (reply, error) {
	return func(r *runner, _ request) (reply, error) {
		st, err := r.load()
		if err != nil {
			return reply{}, err
		}
		return reply{text: text(r, st)}, nil
	}
}

// report writes the Markdown report, and JUnit XML when asked.
func (r *runner) report(req request) (reply, error) {
	st, err := r.load()
	if err != nil {
		return reply{}, err
	}
	md := r.rootPath(st.Report)
	if req.markdown != "" {
		md = r.path(req.markdown)
	}
	if err := writeOut(md, st, markdown); err != nil {
		return reply{}, fmt.Errorf("writing the report: %w", err)
	}
	written := []string{project.Display(r.root, md)}
	if req.junit != "" {
		path := r.path(req.junit)
		if err := writeOut(path, st, junit); err != nil {
			return reply{}, fmt.Errorf("writing the JUnit report: %w", err)
		}
		written = append(written, project.Display(r.root, path))
	}
	c := st.counts()
	return reply{text: reportText(st, written), failed: c.Failed, total: c.Total()}, nil
}

// finish writes the report of a run that just completed, and says where.
func (r *runner) finish(st *State) string {
	if st.Mode != Completed {
		return ""
	}
	if err := writeOut(r.rootPath(st.Report), st, markdown); err != nil {
		return "The report could not be written: " + err.Error()
	}
	return "Report: " + st.Report
}

// writeOut writes st as render makes it, crash-safe, creating its folder.
func writeOut(path string, st *State, render func(*State) ([]byte, error)) error {
	data, err := render(st)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = queue.WriteFile(path, data)
	}
	return err
}

// update changes the session's run, which must exist.
func (r *runner) update(f func(*State) (*State, error)) (*State, error) {
	return update(r.dir, r.session, func(st *State) (*State, error) {
		if st == nil {
			return nil, errNoRun
		}
		return f(st)
	})
}

// load reads the session's run, which must exist, without the lock.
func (r *runner) load() (*State, error) {
	st, err := loadRun(runFile(r.dir, r.session))
	if err == nil && st == nil {
		err = errNoRun
	}
	return st, err
}

func (r *runner) noCurrent(st *State) error {
	if st.Mode == Aborted {
		return cli.WithHint(errors.New("the run was aborted"), "start a new one with "+r.startWord())
	}
	return cli.WithHint(fmt.Errorf("the run is complete: %s", st.counts()), r.word("report")+" writes the report; "+r.word("retry")+" runs a failed test again")
}

func (r *runner) startWord() string {
	if r.hook {
		return SlashCommand
	}
	return "testhook init"
}

// brief is the current test as the agent gets it, after lead, if any.
func (r *runner) brief(st *State, lead string) string {
	what := "Carry out this action and answer; the answer is checked against the test's expectations."
	if st.Auto {
		what = "Carry out this action now. When you finish, your final message is the answer that is checked; the next test follows."
	}
	return joinSome("\n\n", lead, "stopgate test run, "+st.handout(), what)
}

// joinSome joins the parts that are not empty.
func joinSome(sep string, parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), sep)
}

func (r *runner) startText(st *State, old *State) string {
	var b strings.Builder
	started := fmt.Sprintf("Started a run of %s from %s (session %s)", cli.Plural(len(st.Tests), "test", "tests"), st.File, st.Session)
	b.WriteString(joinSome(": ", started, st.Description) + ".\n")
	if len(st.Filters.Categories)+len(st.Filters.Tags) > 0 {
		fmt.Fprintf(&b, "Filters: %s.\n", st.Filters)
	}
	if old != nil && old.Mode == Running {
		fmt.Fprintf(&b, "It replaces this session's unfinished run (%s).\n", old.counts())
	}
	n, auto := len(st.Tests), "Auto mode: the agent runs the tests by itself; each time it stops, its answer is checked and the next test is handed to it.\n"
	switch {
	case !st.Auto:
		fmt.Fprintf(&b, "%s hands out test 1/%d; %s TEXT checks an answer; %s, %s.", r.word("next"), n, r.word("validate"), r.word("skip"), r.word("status"))
	case st.Issued:
		fmt.Fprintf(&b, "%s%s\nTest 1/%d is handed to the agent now.", auto, r.capText(n), n)
	default:
		fmt.Fprintf(&b, "%s%s\nType next in Claude Code (session %s) to hand the agent test 1/%d.", auto, r.capText(n), st.Session, n)
	}
	return b.String()
}

// capText says how many tests fit in one turn of an auto run (see stopAnswer).
func (r *runner) capText(n int) string {
	per := r.blockCap
	capNote := fmt.Sprintf("Claude Code allows %d consecutive blocked stops (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP) and the run keeps one in reserve", r.blockCap)
	if n <= per {
		return fmt.Sprintf("All %d tests fit in one turn: %s, so %d tests run per turn.", n, capNote, per)
	}
	var at []string
	for i := per; i < n; i += per {
		at = append(at, fmt.Sprint(i))
	}
	return fmt.Sprintf("%s, so %d tests run per turn: this run pauses after test %s; type next in Claude Code to go on each time. Raise CLAUDE_CODE_STOP_HOOK_BLOCK_CAP to pause less.",
		capNote, per, strings.Join(at, ", "))
}

// afterResult reports a recorded result and what comes next.
func (r *runner) afterResult(st *State, judged int, skipped []int) string {
	s := resultWhys(st, judged) + resultLines(st, skipped, "") + "\n"
	if st.Mode != Completed {
		s += fmt.Sprintf("Progress: %s.\n", st.counts())
	}
	return joinSome("\n", s+r.upNext(st), r.finish(st))
}

// resultLines is a resultLine and end for each of idx, each after a line break.
func resultLines(st *State, idx []int, end string) string {
	s := ""
	for _, i := range idx {
		s += "\n" + resultLine(st, i) + end
	}
	return s
}

// statusWord is how a result is shown in text and in the report.
var statusWord = map[Status]string{Passed: "PASS", Failed: "FAIL", Skipped: "SKIP"}

// resultLine is "PASS id (i/N)", FAIL or SKIP.
func resultLine(st *State, i int) string {
	res := st.Results[i]
	// Only a skipped test has a Reason.
	return joinSome(": ", fmt.Sprintf("%s %s (%d/%d)", statusWord[res.Status], st.Tests[i].ID, i+1, len(st.Tests)), res.Reason)
}

// resultWhys is resultLine and a failed test's reasons, one a line.
func resultWhys(st *State, i int) string {
	return strings.Join(append([]string{resultLine(st, i)}, st.Results[i].Failures...), "\n  - ")
}

// upNext says what comes next: the next test, or the run's end.
func (r *runner) upNext(st *State) string {
	if st.current() == nil {
		return r.endText(st)
	}
	return fmt.Sprintf("Next is %s.\nType %s for it.", st.testLine(st.Current), r.word("next"))
}

// endText sums up a run that has no current test.
func (r *runner) endText(st *State) string {
	c := st.counts()
	if st.Mode == Aborted {
		return fmt.Sprintf("The run was aborted: %s. %s starts a new one.", c, r.startWord())
	}
	return fmt.Sprintf("Run complete: %s of %d.", c, c.Total())
}

func (r *runner) statusText(st *State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Run of %s (session %s, %s): %s%s.\nFilters: %s.\nProgress: %s.\n", st.File, st.Session,
		map[bool]string{true: "auto", false: "manual"}[st.Auto], st.Mode, map[bool]string{true: ", paused"}[st.Paused], st.Filters, st.counts())
	for i, res := range st.Results {
		mark, note := "·", ""
		switch {
		case res != nil:
			mark = map[Status]string{Passed: "✔", Failed: "✘", Skipped: "-"}[res.Status]
			note = cmp.Or(strings.Join(res.Failures, "; "), res.Reason)
		case st.Mode == Running && i == st.Current:
			mark, note = "→", map[bool]string{true: " (handed to the agent)", false: " (current)"}[st.Issued]
		}
		if res != nil && res.Status != Passed {
			note = ": " + note
		}
		fmt.Fprintf(&b, "  %s %s%s\n", mark, st.Tests[i].ID, note)
	}
	if st.Paused && st.Mode == Running {
		return b.String() + fmt.Sprintf("Paused before the client's cap on blocked stops: type %s to go on.", r.word("next"))
	}
	return b.String() + r.upNext(st)
}

func varsText(_ *runner, st *State) string {
	if len(st.Vars) == 0 {
		return "No variables saved yet."
	}
	var lines []string
	for _, n := range slices.Sorted(maps.Keys(st.Vars)) {
		lines = append(lines, fmt.Sprintf("%s = %s   (saved by %s)", n, st.Vars[n].Value, st.Vars[n].Test))
	}
	return strings.Join(lines, "\n")
}

func reportText(st *State, written []string) string {
	c := st.counts()
	s := fmt.Sprintf("%s: %d tests, %s%s.", st.File, c.Total(), c, map[Mode]string{Running: " (still running)", Aborted: " (aborted)"}[st.Mode])
	for _, i := range st.withStatus(Failed) {
		s += "\n" + resultWhys(st, i)
	}
	return s + "\nWrote " + strings.Join(written, " and ") + "."
}
