package testhook

import (
	"bytes"
	"cmp"
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

// markdown is the run's report: totals, a table per category, failures, skips, variables and pauses.
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
		"word": func(s Status) string { return statusWord[s] },
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

// junitSuite is a category's JUnit testsuite or, with XMLName set, the run's testsuites.
type junitSuite struct {
	XMLName   xml.Name
	Name      string       `xml:"name,attr"`
	Tests     int          `xml:"tests,attr"`
	Failures  int          `xml:"failures,attr"`
	Errors    int          `xml:"errors,attr"`
	Skipped   int          `xml:"skipped,attr"`
	Time      string       `xml:"time,attr"`
	Timestamp string       `xml:"timestamp,attr,omitempty"`
	Suites    []junitSuite `xml:"testsuite"`
	Cases     []junitCase  `xml:"testcase"`
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

// newSuite is the testsuite of tests counted c; a test not run is skipped.
func newSuite(name string, c Counts) junitSuite {
	return junitSuite{Name: name, Tests: c.Total(), Failures: c.Failed, Skipped: c.Skipped + c.NotRun, Time: seconds(c.Time)}
}

// junit renders the run as JUnit XML.
func junit(st *State) ([]byte, error) {
	out := newSuite(st.File, st.counts())
	out.XMLName.Local = "testsuites"
	for _, cat := range st.categories() {
		s := newSuite(cat.Name, st.counts(cat.Tests...))
		for _, i := range cat.Tests {
			r := st.Results[i]
			tc := junitCase{Name: st.Tests[i].ID, Classname: cat.Name, Time: "0.000"}
			if r != nil {
				tc.Time = seconds(r.Duration())
				s.Timestamp = cmp.Or(s.Timestamp, r.Started.UTC().Format("2006-01-02T15:04:05"))
			}
			switch {
			case r == nil:
				tc.Skipped = &junitNote{Message: "not run"}
			case r.Status == Failed:
				text := joinSome("\n\nanswer:\n", strings.Join(r.Failures, "\n"), r.Answer)
				tc.Failure = &junitNote{Message: strings.Join(r.Failures, "; "), Type: "expectation", Text: text}
			case r.Status == Skipped:
				tc.Skipped = &junitNote{Message: r.Reason}
			}
			s.Cases = append(s.Cases, tc)
		}
		out.Suites = append(out.Suites, s)
	}
	data, err := xml.MarshalIndent(out, "", "  ")
	return append([]byte(xml.Header), append(data, '\n')...), err
}

func seconds(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
