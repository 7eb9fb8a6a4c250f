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

// namedCounts is a row of the report's totals.
type namedCounts struct {
	Name string
	Counts
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

// render renders template name on d: a text of texts.tmpl (textData), or a report file (*State),
// report.md.tmpl (totals, a table per category, failures, skips, variables, pauses) or
// junit.xml.tmpl (a testsuite per category; a test not run is skipped).
func (r *runner) render(name string, d any) ([]byte, error) {
	funcs := template.FuncMap{
		"word": r.word, "startWord": r.startWord, "blockCap": func() int { return r.blockCap },
		"plural": cli.Plural, "join": strings.Join, "joinSome": joinSome, "add": func(a, b int) int { return a + b },
		"resultWhys": resultWhys, "resultLine": resultLine, "handout": (*State).handout, "current": (*State).current,
		"testLine": (*State).testLine, "withStatus": (*State).withStatus, "categories": (*State).categories,
		"counts": func(st *State, cat ...*category) namedCounts { // a category's, or the total's
			if len(cat) == 0 {
				return namedCounts{"**total**", st.counts()}
			}
			return namedCounts{cat[0].Name, st.counts(cat[0].Tests...)}
		},
		"statusWord": func(s Status) string { return statusWord[s] },
		"mark":       func(s Status) string { return map[Status]string{Passed: "✔", Failed: "✘", Skipped: "-"}[s] },
		"pauses":     r.pauses, "cell": cell, "dur": dur, "fenced": fenced, "xml": xmlText, "cdata": cdata,
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
