// Package report renders the outcome log as one self-contained HTML page
// (`gate report`) of inline SVG charts: it loads nothing (its CSP forbids it).
package report

import (
	"cmp"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/outcome"
)

// Verdicts as charted, in stacking order; "observe" (a stop observe mode
// let through) only when the log has it.
var verdicts = []string{outcome.Pass, outcome.Block, outcome.Halt, "observe"}

// model is what the page shows, computed from the records.
type model struct {
	Title      string
	Generated  time.Time
	From, To   time.Time
	Total      int            // stops judged: the sum of Counts
	Cleared    int            // gate clear's records, a person's decision and no stop
	Counts     map[string]int // by verdict
	Buckets    []bucket       // verdicts over time
	Span       span
	Prompts    []timing                 // most failed first; Runs are the checks of the prompt
	Validators []timing                 // most failed first
	Slowest    []timing                 // most total time first
	Halts      []halt                   // newest first, at most maxHalts
	Clients    []*model                 // each client's stops, most first
	Judges     []outcome.ValidatorStats // what each judge cost, by name
}

type bucket struct {
	Start  time.Time
	Counts map[string]int
	Total  int
}

type timing struct {
	Name               string
	Runs, Fails        int
	Total, Median, Max time.Duration
}

type halt struct {
	Time                             time.Time
	Client, Session, Prompts, Reason string
}

const (
	maxBars   = 15 // rows of a bar chart
	maxHalts  = 50
	maxBucket = 60 // columns of the time chart
)

// build computes the model of records, oldest first, and of each client's.
func build(records []outcome.Record, title string, now time.Time) *model {
	m := summary(records, title, now)
	byClient := map[string][]outcome.Record{}
	for _, r := range records {
		if r.Decision != outcome.Cleared { // no stop, and no client: gate clear is a person's
			byClient[clientOf(r)] = append(byClient[clientOf(r)], r)
		}
	}
	for name, mine := range byClient {
		m.Clients = append(m.Clients, summary(mine, name, now))
	}
	slices.SortFunc(m.Clients, func(a, b *model) int { return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.Title, b.Title)) })
	return m
}

// summary computes the model of records, oldest first, but for its clients.
func summary(records []outcome.Record, title string, now time.Time) *model {
	m := &model{Title: title, Generated: now, Counts: map[string]int{}}
	if len(records) > 0 {
		m.From, m.To = records[0].Time, records[len(records)-1].Time
	}
	st := outcome.Summarize(records)
	m.Cleared, m.Total = st.Cleared, len(records)-st.Cleared
	var prompts, all []timing
	for _, p := range st.Prompts {
		prompts = append(prompts, timing{Name: p.Prompt, Runs: p.Checked, Fails: p.Checked - p.Passed})
	}
	for _, v := range st.Validators {
		total := time.Duration(0)
		for _, d := range v.Durations {
			total += d
		}
		all = append(all, timing{Name: v.Name, Runs: v.Runs, Fails: v.Runs - v.Passed, Total: total, Median: v.Median(), Max: v.Max()})
		if v.Asked+v.Cached > 0 {
			m.Judges = append(m.Judges, v)
		}
	}
	m.Prompts, m.Validators = mostFailed(prompts), mostFailed(all)
	m.Slowest = slices.Clone(all)
	slices.SortStableFunc(m.Slowest, func(a, b timing) int { return cmp.Compare(b.Total, a.Total) })
	m.Slowest = m.Slowest[:min(len(m.Slowest), maxBars)]

	m.Span = spanOf(m.From, m.To)
	first := m.Span.floor(m.From)
	for t := first; len(records) > 0 && !t.After(m.To); t = t.Add(m.Span.d) {
		m.Buckets = append(m.Buckets, bucket{Start: t, Counts: map[string]int{}})
	}
	for _, r := range records {
		if r.Decision == outcome.Cleared {
			continue
		}
		v := r.Decision
		if r.WouldStop() {
			v = "observe"
		}
		m.Counts[v]++
		if i := int(m.Span.floor(r.Time).Sub(first) / m.Span.d); i >= 0 && i < len(m.Buckets) { // else a record out of time order
			m.Buckets[i].Counts[v]++
			m.Buckets[i].Total++
		}
	}
	for i := len(records) - 1; i >= 0 && len(m.Halts) < maxHalts; i-- {
		if r := records[i]; r.Decision == outcome.Halt {
			m.Halts = append(m.Halts, halt{Time: r.Time, Client: clientOf(r), Session: r.Scope() + " of " + r.Session,
				Prompts: strings.Join(r.Prompts, ", "), Reason: cmp.Or(r.Reason, "(no reason recorded)")})
		}
	}
	return m
}

// mostFailed returns the maxBars of ts that failed most, most first.
func mostFailed(ts []timing) []timing {
	out := slices.DeleteFunc(slices.Clone(ts), func(t timing) bool { return t.Fails == 0 })
	slices.SortStableFunc(out, func(a, b timing) int { return cmp.Compare(b.Fails, a.Fails) })
	return out[:min(len(out), maxBars)]
}

// clientOf names r's client, "unknown" in an older gate's log.
func clientOf(r outcome.Record) string { return cmp.Or(r.Client, "unknown") }

// span is the width of a column of the time chart, and how a column is labelled.
type span struct {
	Name, label string
	d           time.Duration
}

// spanOf picks the smallest span that draws from..to in maxBucket columns.
func spanOf(from, to time.Time) span {
	for _, s := range []span{{"hour", "01-02 15h", time.Hour}, {"6 hours", "01-02 15h", 6 * time.Hour}, {"day", time.DateOnly, 24 * time.Hour},
		{"week", time.DateOnly, 7 * 24 * time.Hour}, {"30 days", time.DateOnly, 30 * 24 * time.Hour}} {
		if to.Sub(from)/s.d < maxBucket {
			return s
		}
	}
	return span{"year", time.DateOnly, 365 * 24 * time.Hour}
}

func (s span) floor(t time.Time) time.Time { return t.UTC().Truncate(s.d) }

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
	for _, c := range m.Clients {
		if len(m.Clients) > 1 {
			each = append(each, chartsOf(c, "client-"+c.Title+"-"))
		}
	}
	return page().Execute(w, struct {
		All      view
		M        *model
		Verdicts []string
		Clients  chart
		Each     []view
	}{chartsOf(m, ""), m, shown, clientChart(m), each})
}

// view is the charts of one model: the whole log's, or a client's (ids prefixed).
type view struct {
	M                            *model
	Over, Prompts, Failing, Time chart
}

func chartsOf(m *model, prefix string) view {
	fails := func(t timing) (string, float64) {
		return fmt.Sprintf("%d of %d failed", t.Fails, t.Runs), float64(t.Fails)
	}
	return view{M: m, Over: verdictChart(prefix+"verdicts-over-time", m), Prompts: barsOf(prefix+"failing-prompts", m.Prompts, "block", fails),
		Failing: barsOf(prefix+"failing-validators", m.Validators, "block", fails),
		Time: barsOf(prefix+"validator-time", m.Slowest, "time", func(t timing) (string, float64) {
			return fmt.Sprintf("%s total, %d runs", round(t.Total), t.Runs), t.Total.Seconds()
		})}
}
