package report

import (
	_ "embed"
	"html/template"
	"io"
	"sync"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/outcome"
)

//go:embed page.html
var pageText string

// page is parsed at the first report, not at every start of the gate.
var page = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("page").Funcs(template.FuncMap{
		"round": round,
		"clip":  func(s string) string { return cli.Clip(s, 40, "…") }, // a label fits its column
	}).Parse(pageText))
})

// Write renders records, oldest first, as the report page titled title.
func Write(w io.Writer, records []outcome.Record, title string, now time.Time) error {
	m := build(records, title, now.UTC())
	shown := verdicts[:3]
	if m.Counts["observe"] > 0 {
		shown = verdicts
	}
	// A log of more than one client gets each client's own charts too.
	var each []view
	if len(m.Clients) > 1 {
		for _, c := range m.Clients {
			var mine []outcome.Record
			for _, r := range records {
				if clientOf(r) == c.Name && r.Decision != outcome.Cleared {
					mine = append(mine, r)
				}
			}
			each = append(each, chartsOf(build(mine, c.Name, now.UTC()), "client-"+c.Name+"-"))
		}
	}
	return page().Execute(w, struct {
		All      view
		M        *model
		Verdicts []string
		Clients  bars
		Each     []view
	}{chartsOf(m, ""), m, shown, clientChart(m), each})
}

// view is the charts of one model: the whole log's, or one client's, whose
// chart ids carry prefix.
type view struct {
	M                      *model
	Over                   columns
	Prompts, Failing, Time bars
}

func chartsOf(m *model, prefix string) view {
	return view{M: m, Over: verdictChart(prefix+"verdicts-over-time", m), Prompts: failBars(prefix+"failing-prompts", m.Prompts),
		Failing: failBars(prefix+"failing-validators", m.Validators), Time: timeChart(prefix+"validator-time", m)}
}
