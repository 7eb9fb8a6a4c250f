package testhook

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
)

// categories returns the plan's categories in order of first appearance,
// with the plan indexes of each.
func (st *State) categories() (names []string, tests map[string][]int) {
	tests = map[string][]int{}
	for i, t := range st.Tests {
		if _, ok := tests[t.Category]; !ok {
			names = append(names, t.Category)
		}
		tests[t.Category] = append(tests[t.Category], i)
	}
	return names, tests
}

// markdown is the run's report: totals, a table per category, each failure
// with its reasons and the answer, and the durations.
func markdown(st *State) string {
	var b strings.Builder
	writeHeader(&b, st)
	names, byCat := st.categories()
	writeTotals(&b, st, names, byCat)
	for _, cat := range names {
		writeCategory(&b, st, cat, byCat[cat])
	}
	writeFailures(&b, st)
	writeSkipped(&b, st)
	writeVars(&b, st)
	writePauses(&b, st)
	return b.String()
}

// writeHeader writes the title and the run's facts.
func writeHeader(b *strings.Builder, st *State) {
	fmt.Fprintf(b, "# Test report: %s\n\n", cmp.Or(st.Description, st.File))
	fmt.Fprintf(b, "- Suite: `%s`\n", st.File)
	fmt.Fprintf(b, "- Session: `%s` (%s)\n", st.Session, st.driving())
	fmt.Fprintf(b, "- Filters: %s\n", st.Filters)
	fmt.Fprintf(b, "- Status: %s\n", st.Mode)
	fmt.Fprintf(b, "- Started: %s\n", st.Started.Format(time.RFC3339))
	if !st.Completed.IsZero() {
		fmt.Fprintf(b, "- Finished: %s (%s)\n", st.Completed.Format(time.RFC3339), dur(st.Completed.Sub(st.Started)))
	}
}

// writeTotals writes the counts, overall and per category.
func writeTotals(b *strings.Builder, st *State, names []string, byCat map[string][]int) {
	total := st.counts()
	fmt.Fprintf(b, "\n**%d tests: %s.**\n\n", total.Total(), total)
	b.WriteString("| Category | Tests | Passed | Failed | Skipped | Not run | Duration |\n")
	b.WriteString("|---|--:|--:|--:|--:|--:|--:|\n")
	for _, cat := range names {
		c := st.counts(byCat[cat]...)
		fmt.Fprintf(b, "| %s | %d | %d | %d | %d | %d | %s |\n", cell(cat), c.Total(), c.Passed, c.Failed, c.Skipped, c.NotRun, dur(c.Time))
	}
	fmt.Fprintf(b, "| **total** | %d | %d | %d | %d | %d | %s |\n", total.Total(), total.Passed, total.Failed, total.Skipped, total.NotRun, dur(total.Time))
}

// writeCategory writes the table of one category's tests.
func writeCategory(b *strings.Builder, st *State, cat string, idx []int) {
	fmt.Fprintf(b, "\n## %s\n\n", cat)
	b.WriteString("| # | Test | Result | Duration | Description |\n")
	b.WriteString("|--:|---|---|--:|---|\n")
	for _, i := range idx {
		t, r := &st.Tests[i], st.Results[i]
		result, d := "not run", ""
		if r != nil {
			result, d = statusWord[r.Status], dur(r.Duration())
			if st.Tries[i] > 1 {
				result += fmt.Sprintf(" (%d tries)", st.Tries[i])
			}
		}
		fmt.Fprintf(b, "| %d | `%s` | %s | %s | %s |\n", i+1, cell(t.ID), result, d, cell(t.Description))
	}
}

// writeFailures writes each failed test with its reasons and the answer.
func writeFailures(b *strings.Builder, st *State) {
	failed := st.withStatus(Failed)
	if len(failed) == 0 {
		return
	}
	b.WriteString("\n## Failures\n")
	for _, i := range failed {
		t, r := &st.Tests[i], st.Results[i]
		fmt.Fprintf(b, "\n### `%s` (%s)\n\n", t.ID, t.Category)
		if t.Description != "" {
			b.WriteString(t.Description + "\n\n")
		}
		for _, w := range r.Failures {
			b.WriteString("- " + w + "\n")
		}
		b.WriteString("\nAnswer:\n\n" + fenced(r.Answer))
	}
}

// writeSkipped writes each skipped test with its reason.
func writeSkipped(b *strings.Builder, st *State) {
	skipped := st.withStatus(Skipped)
	if len(skipped) == 0 {
		return
	}
	b.WriteString("\n## Skipped\n\n")
	for _, i := range skipped {
		fmt.Fprintf(b, "- `%s`: %s\n", st.Tests[i].ID, st.Results[i].Reason)
	}
}

// writeVars writes the variables the run saved, by name.
func writeVars(b *strings.Builder, st *State) {
	if len(st.Vars) == 0 {
		return
	}
	b.WriteString("\n## Variables\n\n")
	for _, n := range slices.Sorted(maps.Keys(st.Vars)) {
		fmt.Fprintf(b, "- `%s` = `%s` (saved by `%s`)\n", n, st.Vars[n].Value, st.Vars[n].Test)
	}
}

// writePauses explains where an auto run let a stop through.
func writePauses(b *strings.Builder, st *State) {
	if len(st.Pauses) == 0 {
		return
	}
	b.WriteString("\n## Pauses\n\n")
	var at []string
	for _, i := range st.Pauses {
		at = append(at, fmt.Sprintf("%d (`%s`)", i+1, st.Tests[i].ID))
	}
	fmt.Fprintf(b, "The auto run paused %s, after test %s: Claude Code allows a fixed number of consecutive blocked stops (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP, 9 by default) and then ends the turn, so the run let the stop through itself rather than be cut off with a test handed out, and went on when `next` was typed.\n",
		cli.Plural(len(st.Pauses), "time", "times"), strings.Join(at, ", "))
}

// dur shows a duration to the millisecond.
func dur(d time.Duration) string {
	if d < time.Millisecond {
		return "0s"
	}
	return d.Round(time.Millisecond).String()
}

// cell keeps text inside one Markdown table cell.
func cell(s string) string {
	return cli.OneLine(strings.ReplaceAll(s, "|", `\|`))
}

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

// JUnit XML as CI systems read it: a testsuite per category, a testcase
// per test; a test that has not run is a skipped testcase saying so.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name      string      `xml:"name,attr"`
	Tests     int         `xml:"tests,attr"`
	Failures  int         `xml:"failures,attr"`
	Errors    int         `xml:"errors,attr"`
	Skipped   int         `xml:"skipped,attr"`
	Time      string      `xml:"time,attr"`
	Timestamp string      `xml:"timestamp,attr,omitempty"`
	Cases     []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",cdata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

// junit renders the run as JUnit XML.
func junit(st *State) ([]byte, error) {
	names, byCat := st.categories()
	total := st.counts()
	out := junitSuites{Name: st.File, Tests: total.Total(), Failures: total.Failed, Skipped: total.Skipped + total.NotRun}
	for _, cat := range names {
		c := st.counts(byCat[cat]...)
		s := junitSuite{Name: cat, Tests: c.Total(), Failures: c.Failed, Skipped: c.Skipped + c.NotRun, Time: seconds(c.Time)}
		for _, i := range byCat[cat] {
			t, r := &st.Tests[i], st.Results[i]
			tc := junitCase{Name: t.ID, Classname: cat, Time: "0.000"}
			if r != nil {
				tc.Time = seconds(r.Duration())
				if s.Timestamp == "" {
					s.Timestamp = r.Started.UTC().Format("2006-01-02T15:04:05")
				}
			}
			switch {
			case r == nil:
				tc.Skipped = &junitSkipped{Message: "not run"}
			case r.Status == Failed:
				text := strings.Join(r.Failures, "\n")
				if r.Answer != "" {
					text += "\n\nanswer:\n" + r.Answer
				}
				tc.Failure = &junitFailure{Message: strings.Join(r.Failures, "; "), Type: "expectation", Text: text}
			case r.Status == Skipped:
				tc.Skipped = &junitSkipped{Message: r.Reason}
			}
			s.Cases = append(s.Cases, tc)
		}
		out.Suites = append(out.Suites, s)
	}
	out.Time = seconds(total.Time)
	data, err := xml.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(data, '\n')...), nil
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
