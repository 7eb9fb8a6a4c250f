package testhook

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
)

// What the runner says, to the person and to the agent. Plain text: a hook
// reason is shown as it is, and a terminal shows it as it is.

// brief is the current test as the agent gets it: the handout, and what to
// do with it. lead, if any, comes first (the previous test's outcome).
func (r *runner) brief(st *State, lead string) string {
	if lead != "" {
		lead += "\n\n"
	}
	what := "Carry out this action and answer; the answer is checked against the test's expectations."
	if st.Auto {
		what = "Carry out this action now. When you finish, your final message is the answer that is checked; the next test follows."
	}
	return lead + "stopgate test run, " + st.handout() + "\n\n" + what
}

func (r *runner) startText(st *State, old *State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Started a run of %s from %s (session %s)", cli.Plural(len(st.Tests), "test", "tests"), st.File, st.Session)
	if st.Description != "" {
		b.WriteString(": " + st.Description)
	}
	b.WriteString(".\n")
	if len(st.Filters.Categories)+len(st.Filters.Tags) > 0 {
		fmt.Fprintf(&b, "Filters: %s.\n", st.Filters)
	}
	if old != nil && old.Mode == Running {
		fmt.Fprintf(&b, "It replaces this session's unfinished run (%s).\n", old.counts())
	}
	if st.Auto {
		b.WriteString("Auto mode: the agent runs the tests by itself; each time it stops, its answer is checked and the next test is handed to it.\n")
		b.WriteString(r.capText(len(st.Tests)) + "\n")
		if !st.Issued {
			fmt.Fprintf(&b, "Type next in Claude Code (session %s) to hand the agent test 1/%d.", st.Session, len(st.Tests))
		} else {
			fmt.Fprintf(&b, "Test 1/%d is handed to the agent now.", len(st.Tests))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "%s hands out test 1/%d; %s TEXT checks an answer; %s, %s.",
		r.word("next"), len(st.Tests), r.word("validate"), r.word("skip"), r.word("status"))
	return b.String()
}

// capText says how many tests fit in one turn of an auto run. Claude Code
// allows blockCap consecutive blocked stops; the run blocks at most
// blockCap-1 times in a row (see stopAnswer), so a turn holds the test it
// starts with and blockCap-1 more.
func (r *runner) capText(n int) string {
	per := r.perTurn()
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

// perTurn is how many tests one turn of an auto run holds.
func (r *runner) perTurn() int { return max(r.blockCap, 1) }

// afterResult reports a recorded result and what comes next.
func (r *runner) afterResult(st *State, judged int, skipped []int, finish string) string {
	var b strings.Builder
	b.WriteString(resultWhys(st, judged))
	for _, i := range skipped {
		b.WriteString("\n" + resultLine(st, i))
	}
	b.WriteString("\n")
	if st.Mode == Completed {
		b.WriteString(r.endText(st))
		if finish != "" {
			b.WriteString("\n" + finish)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "Progress: %s.\n%s", st.counts(), r.nextHint(st))
	return b.String()
}

// statusWord is how a result is shown in text and in the report.
var statusWord = map[Status]string{Passed: "PASS", Failed: "FAIL", Skipped: "SKIP"}

// resultLine is "PASS id (i/N)", FAIL or SKIP.
func resultLine(st *State, i int) string {
	res := st.Results[i]
	s := fmt.Sprintf("%s %s (%d/%d)", statusWord[res.Status], st.Tests[i].ID, i+1, len(st.Tests))
	if res.Status == Skipped && res.Reason != "" {
		s += ": " + res.Reason
	}
	return s
}

// resultWhys is resultLine and a failed test's reasons, one a line.
func resultWhys(st *State, i int) string {
	return strings.Join(append([]string{resultLine(st, i)}, st.Results[i].Failures...), "\n  - ")
}

func (r *runner) nextHint(st *State) string {
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
	fmt.Fprintf(&b, "Run of %s (session %s, %s): %s", st.File, st.Session, st.driving(), st.Mode)
	if st.Paused {
		b.WriteString(", paused")
	}
	fmt.Fprintf(&b, ".\nFilters: %s.\nProgress: %s.\n", st.Filters, st.counts())
	for i := range st.Tests {
		res := st.Results[i]
		mark, note := "  ·", ""
		switch {
		case res != nil && res.Status == Passed:
			mark = "  ✔"
		case res != nil && res.Status == Failed:
			mark = "  ✘"
			note = ": " + strings.Join(res.Failures, "; ")
		case res != nil:
			mark = "  -"
			note = ": " + res.Reason
		case st.Mode == Running && i == st.Current:
			mark = "  →"
			if st.Issued {
				note = " (handed to the agent)"
			} else {
				note = " (current)"
			}
		}
		fmt.Fprintf(&b, "%s %s%s\n", mark, st.Tests[i].ID, note)
	}
	switch {
	case st.Mode != Running:
		b.WriteString(r.endText(st))
	case st.Paused:
		fmt.Fprintf(&b, "Paused before the client's cap on blocked stops: type %s to go on.", r.word("next"))
	default:
		b.WriteString(r.nextHint(st))
	}
	return b.String()
}

func varsText(st *State) string {
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
	var b strings.Builder
	c := st.counts()
	fmt.Fprintf(&b, "%s: %d tests, %s", st.File, c.Total(), c)
	if st.Mode == Running {
		b.WriteString(" (still running)")
	} else if st.Mode == Aborted {
		b.WriteString(" (aborted)")
	}
	b.WriteString(".")
	for _, i := range st.withStatus(Failed) {
		b.WriteString("\n" + resultWhys(st, i))
	}
	b.WriteString("\nWrote " + strings.Join(written, " and ") + ".")
	return b.String()
}
