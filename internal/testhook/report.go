package testhook

import (
	"bytes"
	_ "embed"
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
)

// category is one of the plan's categories and its tests' indexes.
type category struct {
	Name  string
	Tests []int
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
	return cats
}

//go:embed report.md.tmpl
var reportTemplate string

// markdown is the run's report: totals, a table per category, each failure
// with its reasons and the answer, skips, variables and pauses.
func markdown(st *State) ([]byte, error) {
	cats := st.categories()
	funcs := template.FuncMap{
		"categories": func() []*category { return cats },
		"failed":     func() []int { return st.withStatus(Failed) },
		"skipped":    func() []int { return st.withStatus(Skipped) },
		"inc":        func(i int) int { return i + 1 },
		"cell":       cell,
		"dur":        dur,
		"fenced":     fenced,
		"counts": func(cat ...*category) namedCounts { // a category's, or the total's
			if len(cat) == 0 {
				return namedCounts{"**total**", st.counts()}
			}
			return namedCounts{cell(cat[0].Name), st.counts(cat[0].Tests...)}
		},
		"result": func(i int) string {
			if st.Results[i] == nil {
				return "not run"
			} else if st.Tries[i] > 1 {
				return fmt.Sprintf("%s (%d tries)", statusWord[st.Results[i].Status], st.Tries[i])
			}
			return statusWord[st.Results[i].Status]
		},
		"took": func(i int) string {
			if st.Results[i] == nil {
				return ""
			}
			return dur(st.Results[i].Duration())
		},
		"pauses": func() string {
			var at []string
			for _, i := range st.Pauses {
				at = append(at, fmt.Sprintf("%d (`%s`)", i+1, st.Tests[i].ID))
			}
			return cli.Plural(len(st.Pauses), "time", "times") + ", after test " + strings.Join(at, ", ")
		},
	}
	var b bytes.Buffer
	err := template.Must(template.New("report").Funcs(funcs).Parse(reportTemplate)).Execute(&b, st)
	return b.Bytes(), err
}

// namedCounts is a row of the report's totals.
type namedCounts struct {
	Name string
	Counts
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
	Name      string     `xml:"name,attr"`
	Classname string     `xml:"classname,attr"`
	Time      string     `xml:"time,attr"`
	Failure   *junitNote `xml:"failure,omitempty"`
	Skipped   *junitNote `xml:"skipped,omitempty"`
}

// junitNote is a case's failure, or why it was skipped.
type junitNote struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",cdata"`
}

// junit renders the run as JUnit XML.
func junit(st *State) ([]byte, error) {
	total := st.counts()
	out := junitSuites{Name: st.File, Tests: total.Total(), Failures: total.Failed, Skipped: total.Skipped + total.NotRun}
	for _, cat := range st.categories() {
		c := st.counts(cat.Tests...)
		s := junitSuite{Name: cat.Name, Tests: c.Total(), Failures: c.Failed, Skipped: c.Skipped + c.NotRun, Time: seconds(c.Time)}
		for _, i := range cat.Tests {
			t, r := &st.Tests[i], st.Results[i]
			tc := junitCase{Name: t.ID, Classname: cat.Name, Time: "0.000"}
			if r != nil {
				tc.Time = seconds(r.Duration())
				if s.Timestamp == "" {
					s.Timestamp = r.Started.UTC().Format("2006-01-02T15:04:05")
				}
			}
			switch {
			case r == nil:
				tc.Skipped = &junitNote{Message: "not run"}
			case r.Status == Failed:
				text := strings.Join(r.Failures, "\n")
				if r.Answer != "" {
					text += "\n\nanswer:\n" + r.Answer
				}
				tc.Failure = &junitNote{Message: strings.Join(r.Failures, "; "), Type: "expectation", Text: text}
			case r.Status == Skipped:
				tc.Skipped = &junitNote{Message: r.Reason}
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
