package report

import (
	_ "embed"
	"html/template"
	"io"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/stopgate/stopgate/internal/outcome"
)

//go:embed page.html
var pageText string

// page is parsed at the first report, not at every start of the gate.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"round": round,
		"clip": func(s string) string { // a label fits its column
			if utf8.RuneCountInString(s) <= 40 {
				return s
			}
			r := []rune(s)
			return string(r[:39]) + "…"
		},
	}).Parse(pageText))
})

// Write renders records, oldest first, as the report page titled title.
func Write(w io.Writer, records []outcome.Record, title string, now time.Time) error {
	m := build(records, title, now.UTC())
	shown := verdicts[:3]
	if m.Counts["observe"] > 0 {
		shown = verdicts
	}
	return page().Execute(w, struct {
		M                               *model
		Verdicts                        []string
		Over                            columns
		Prompts, Failing, Time, Clients bars
	}{m, shown, verdictChart(m), promptChart(m), validatorChart(m), timeChart(m), clientChart(m)})
}
