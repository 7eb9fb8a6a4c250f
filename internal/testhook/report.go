package testhook

import (
	"bytes"
	"embed"
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

//go:embed report.md.tmpl junit.xml.tmpl
var reportFiles embed.FS

// markdown is the run's report: totals, a table per category, failures, skips, variables and pauses.
func markdown(st *State) ([]byte, error) { return render(st, "report.md.tmpl") }

// junit is the run as JUnit XML: a testsuite per category; a test not run is skipped.
func junit(st *State) ([]byte, error) { return render(st, "junit.xml.tmpl") }

// render renders the run with the report template name.
func render(st *State, name string) ([]byte, error) {
	cats := st.categories()
	funcs := template.FuncMap{
		"categories": func() []*category { return cats },
		"failed":     func() []int { return st.withStatus(Failed) },
		"skipped":    func() []int { return st.withStatus(Skipped) },
		"add":        func(a, b int) int { return a + b },
		"cell":       cell,
		"dur":        dur,
		"fenced":     fenced,
		"counts": func(cat ...*category) namedCounts { // a category's, or the total's
			if len(cat) == 0 {
				return namedCounts{"**total**", st.counts()}
			}
			return namedCounts{cat[0].Name, st.counts(cat[0].Tests...)}
		},
		"word":     func(s Status) string { return statusWord[s] },
		"join":     strings.Join,
		"joinSome": joinSome,
		"seconds":  func(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) },
		"xml": func(s string) string {
			var b strings.Builder
			_ = xml.EscapeText(&b, []byte(s)) // a Builder does not fail
			return b.String()
		},
		"cdata": func(s string) string { // a "]]>" inside split across two sections
			if s == "" {
				return ""
			}
			return "<![CDATA[" + strings.ReplaceAll(s, "]]>", "]]]]><![CDATA[>") + "]]>"
		},
	}
	var b bytes.Buffer
	err := template.Must(template.New(name).Funcs(funcs).ParseFS(reportFiles, name)).Execute(&b, st)
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
