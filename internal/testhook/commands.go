package testhook

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/statedir"
)

// start loads the tests file, applies the filters and queues the plan as
// the session's run.
func (r *runner) start(req request) (reply, error) {
	path, err := r.testsFile(req.file)
	if err != nil {
		return reply{}, cli.WithHint(err, "write one (see docs/testhook.md), or name it with --file")
	}
	suite, err := Load(path, r.root)
	if err != nil {
		var ps config.Problems
		if errors.As(err, &ps) {
			return reply{}, cli.WithHint(fmt.Errorf("%s: %s", project.Display(r.root, path), cli.Plural(len(ps), "mistake", "mistakes")), ps.Lines()...)
		}
		return reply{}, err
	}
	f := Filters{Categories: req.categories, Tags: req.tags}
	tests, err := selectTests(suite, f)
	if err != nil {
		return reply{}, err
	}
	now := r.now()
	report := project.Display(r.root, filepath.Join(filepath.Dir(path), "report.md"))
	st := newState(r.session, suite, tests, f, report, req.auto, now)
	ctx := ""
	if req.auto && r.hook {
		// The slash command's turn carries the first test: the agent
		// starts at once, and every stop after it is an answer.
		st.Issued, st.Turn = true, r.turn
		ctx = r.brief(st, "")
	}
	old, err := r.store.Replace(r.session, st)
	if err != nil {
		return reply{}, err
	}
	return reply{text: r.startText(st, old), context: ctx}, nil
}

// selectTests keeps the tests the filters match, and refuses a selection
// in which a test needs a variable that only a left-out test saves.
func selectTests(s *Suite, f Filters) ([]Test, error) {
	var tests []Test
	for _, t := range s.Tests {
		if f.match(&t) {
			tests = append(tests, t)
		}
	}
	if len(tests) == 0 {
		var cats, tags []string
		for _, t := range s.Tests {
			cats = append(cats, t.Category)
			tags = append(tags, t.Tags...)
		}
		slices.Sort(cats)
		slices.Sort(tags)
		return nil, cli.WithHint(fmt.Errorf("no test of %s matches the filters (%s)", s.File, f),
			"categories: "+orNone(slices.Compact(cats)), "tags: "+orNone(slices.Compact(tags)))
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

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// next hands out the current test. Asking again hands out the same test.
func (r *runner) next() (reply, error) {
	// Asking again changes nothing: answer from the file, without the lock.
	st, err := r.load()
	if err != nil {
		return reply{}, err
	}
	if !r.handedOut(st) {
		st, err = r.update(r.handOut)
		if err != nil {
			return reply{}, err
		}
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
		st.Since = r.now()
	}
	// The person asked: a new turn, so the count of blocked stops starts
	// again.
	st.Issued, st.Turn, st.Paused, st.Streak = true, r.turn, false, 0
	return st, nil
}

// record records the current test's result as req says, and what comes
// next: skip, or validate req's text (without text, the agent's last
// answer, kept at Stop).
func (r *runner) record(req request) (reply, error) {
	now := r.now()
	var judged int
	var skipped []int
	st, err := r.update(func(st *State) (*State, error) {
		t := st.current()
		switch {
		case t == nil:
			return nil, r.noCurrent(st)
		case req.name == "skip":
			judged, skipped = st.skip(now)
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
	return reply{text: r.afterResult(st, judged, skipped, r.finish(st))}, nil
}

// retry runs a recorded test again: the one named, else the last failed,
// else the last skipped.
func (r *runner) retry(args []string) (reply, error) {
	now := r.now()
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
	// The test still lacks a variable its saver never saved: it is
	// skipped again, saying why, and the run goes on or is complete.
	var b strings.Builder
	for _, j := range skipped {
		b.WriteString(resultLine(st, j) + "\n")
	}
	if st.Mode == Completed {
		b.WriteString(r.endText(st))
	} else {
		b.WriteString(r.nextHint(st))
	}
	return reply{text: b.String()}, nil
}

// abort ends the run where it stands.
func (r *runner) abort() (reply, error) {
	now := r.now()
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
func (r *runner) show(text func(*State) string) (reply, error) {
	st, err := r.load()
	if err != nil {
		return reply{}, err
	}
	return reply{text: text(st)}, nil
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
	if err := writeOut(md, []byte(markdown(st))); err != nil {
		return reply{}, fmt.Errorf("writing the report: %w", err)
	}
	written := []string{project.Display(r.root, md)}
	if req.junit != "" {
		path := r.path(req.junit)
		data, err := junit(st)
		if err == nil {
			err = writeOut(path, data)
		}
		if err != nil {
			return reply{}, fmt.Errorf("writing the JUnit report: %w", err)
		}
		written = append(written, project.Display(r.root, path))
	}
	c := st.counts()
	return reply{text: reportText(st, written), failed: c.Failed, total: c.Total()}, nil
}

// finish writes the report of a run that just completed, and says where,
// or why not.
func (r *runner) finish(st *State) string {
	if st.Mode != Completed {
		return ""
	}
	if err := writeOut(r.rootPath(st.Report), []byte(markdown(st))); err != nil {
		return "The report could not be written: " + err.Error()
	}
	return "Report: " + st.Report
}

// writeOut writes a report file crash-safe, creating its folder.
func writeOut(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return statedir.WriteFile(path, data)
}

// update changes the session's run, which must exist.
func (r *runner) update(f func(*State) (*State, error)) (*State, error) {
	return r.store.Update(r.session, func(st *State) (*State, error) {
		if st == nil {
			return nil, errNoRun
		}
		return f(st)
	})
}

// load reads the session's run, which must exist, without the lock. A
// hook that has just read it to decide whether a word is the runner's
// hands it over in r.seen rather than read it twice.
func (r *runner) load() (*State, error) {
	if st := r.seen; st != nil {
		r.seen = nil
		return st, nil
	}
	st, err := loadRun(runFile(r.store.dir, r.session))
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
