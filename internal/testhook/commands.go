package testhook

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/template"

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
	err = r.locked(func(path string) error {
		old, _ = loadRun(path) // replaced, readable or not
		return queue.WriteJSON(path, st)
	})
	return reply{text: r.say("start", textData{State: st, Old: old}), context: ctx}, err
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
		return reply{text: r.say("end", textData{State: st})}, nil
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
	return reply{text: resultLines(st, skipped, "")[1:] + "\n" + r.say("upNext", textData{State: st})}, nil
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

// show answers status or vars: text name of the run as it stands.
func show(name string) func(*runner, request) (reply, error) {
	return func(r *runner, _ request) (reply, error) {
		st, err := r.load()
		if err != nil {
			return reply{}, err
		}
		return reply{text: r.say(name, textData{State: st})}, nil
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
	return reply{text: r.say("report", textData{State: st, Written: written}), failed: c.Failed, total: c.Total()}, nil
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

// afterResult reports a recorded result and what comes next.
func (r *runner) afterResult(st *State, judged int, skipped []int) string {
	s := resultWhys(st, judged) + resultLines(st, skipped, "") + "\n"
	if st.Mode != Completed {
		s += fmt.Sprintf("Progress: %s.\n", st.counts())
	}
	return joinSome("\n", s+r.say("upNext", textData{State: st}), r.finish(st))
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

//go:embed texts.tmpl
var texts string

// textData is what texts.tmpl renders: the run, and what some texts add.
type textData struct {
	*State
	Old     *State   // start: the run it replaces
	Written []string // report: the files written
}

// say renders text name of texts.tmpl, the person's words, without a final line break.
func (r *runner) say(name string, d textData) string {
	funcs := template.FuncMap{
		"word": r.word, "startWord": r.startWord, "blockCap": func() int { return r.blockCap },
		"plural": cli.Plural, "join": strings.Join, "resultWhys": resultWhys,
		"counts": func(st *State) Counts { return st.counts() }, "current": (*State).current, "testLine": (*State).testLine,
		"failed": func(st *State) []int { return st.withStatus(Failed) },
		"mark":   func(s Status) string { return map[Status]string{Passed: "✔", Failed: "✘", Skipped: "-"}[s] },
		"pauses": func(n int) string { // the tests after which an auto run of n pauses
			var at []string
			for i := r.blockCap; i < n; i += r.blockCap {
				at = append(at, fmt.Sprint(i))
			}
			return strings.Join(at, ", ")
		},
	}
	var b strings.Builder
	if err := template.Must(template.New("").Funcs(funcs).Parse(texts)).ExecuteTemplate(&b, name, d); err != nil {
		panic(err) // a bug in texts.tmpl, which the tests render whole
	}
	return strings.TrimSuffix(b.String(), "\n")
}
