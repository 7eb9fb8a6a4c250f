// Package report renders the outcome log as one self-contained HTML page
// (`gate report`) of inline SVG charts: it loads nothing (its CSP forbids it).
package report

import (
	"cmp"
	_ "embed"
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

// verdict is the charted verdict of a stop.
func verdict(r outcome.Record) string {
	if r.WouldStop() {
		return "observe"
	}
	return r.Decision
}

// model is what the page shows, computed from the records.
type model struct {
	Title      string
	Generated  time.Time
	From, To   time.Time
	Total      int            // stops judged: the sum of Counts
	Cleared    int            // gate clear's records, a person's decision and no stop
	Counts     map[string]int // by verdict
	Buckets    []bucket       // verdicts over time
	BucketSize string
	Prompts    []timing // most failed first; Runs are the checks of the prompt
	Validators []timing // most failed first
	Slowest    []timing // most total time first
	Halts      []halt   // newest first, at most maxHalts
	Clients    []client
	Judges     []outcome.ValidatorStats // what each judge cost, by name
}

type bucket struct {
	Start  time.Time
	Counts map[string]int
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

type client struct {
	Name   string
	Counts map[string]int
	Total  int
}

const (
	maxBars   = 15 // rows of a bar chart
	maxHalts  = 50
	maxBucket = 60 // columns of the time chart
)

// build computes the model of records, oldest first.
func build(records []outcome.Record, title string, now time.Time) *model {
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
	m.Prompts = mostFailed(prompts)

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
	m.Validators = mostFailed(all)
	m.Slowest = slices.Clone(all)
	slices.SortStableFunc(m.Slowest, func(a, b timing) int { return cmp.Compare(b.Total, a.Total) })
	m.Slowest = m.Slowest[:min(len(m.Slowest), maxBars)]

	clients := map[string]*client{}
	size := bucketSize(m.From, m.To)
	m.BucketSize = size.name
	byStart := map[time.Time]map[string]int{} // a bucket's counts, by verdict
	for _, r := range records {
		if r.Decision == outcome.Cleared {
			continue // no stop, and no client: gate clear is a person's
		}
		v := verdict(r)
		m.Counts[v]++
		name := clientOf(r)
		if clients[name] == nil {
			clients[name] = &client{Name: name, Counts: map[string]int{}}
		}
		clients[name].Counts[v]++
		clients[name].Total++
		start := size.floor(r.Time)
		if byStart[start] == nil {
			byStart[start] = map[string]int{}
		}
		byStart[start][v]++
	}
	for t := size.floor(m.From); len(records) > 0 && !t.After(m.To); t = size.next(t) {
		m.Buckets = append(m.Buckets, bucket{Start: t, Counts: byStart[t]}) // nil counts: none
	}
	for i := len(records) - 1; i >= 0 && len(m.Halts) < maxHalts; i-- {
		r := records[i]
		if r.Decision == outcome.Halt {
			m.Halts = append(m.Halts, halt{Time: r.Time, Client: clientOf(r), Session: r.Scope() + " of " + r.Session,
				Prompts: strings.Join(r.Prompts, ", "), Reason: cmp.Or(r.Reason, "(no reason recorded)")})
		}
	}
	for _, c := range clients {
		m.Clients = append(m.Clients, *c)
	}
	slices.SortFunc(m.Clients, func(a, b client) int { return cmp.Or(cmp.Compare(b.Total, a.Total), cmp.Compare(a.Name, b.Name)) })
	return m
}

// mostFailed returns the maxBars of ts that failed most, most first.
func mostFailed(ts []timing) []timing {
	var out []timing
	for _, t := range ts {
		if t.Fails > 0 {
			out = append(out, t)
		}
	}
	slices.SortStableFunc(out, func(a, b timing) int { return cmp.Compare(b.Fails, a.Fails) })
	return out[:min(len(out), maxBars)]
}

// clientOf names r's client, "unknown" in an older gate's log.
func clientOf(r outcome.Record) string { return cmp.Or(r.Client, "unknown") }

// span is the width of a column of the time chart.
type span struct {
	name string
	d    time.Duration // 0: a calendar week
}

// bucketSize picks the smallest span that draws from..to in maxBucket columns.
func bucketSize(from, to time.Time) span {
	for _, s := range []span{{"hour", time.Hour}, {"6 hours", 6 * time.Hour}, {"day", 24 * time.Hour}, {"week", 7 * 24 * time.Hour}, {"30 days", 30 * 24 * time.Hour}} {
		if to.Sub(from)/s.d < maxBucket {
			return s
		}
	}
	return span{"year", 365 * 24 * time.Hour}
}

func (s span) floor(t time.Time) time.Time { return t.UTC().Truncate(s.d) }
func (s span) next(t time.Time) time.Time  { return t.Add(s.d) }

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

// view is the charts of one model: the whole log's, or a client's (ids prefixed).
type view struct {
	M                      *model
	Over                   columns
	Prompts, Failing, Time bars
}

func chartsOf(m *model, prefix string) view {
	return view{M: m, Over: verdictChart(prefix+"verdicts-over-time", m), Prompts: failBars(prefix+"failing-prompts", m.Prompts),
		Failing: failBars(prefix+"failing-validators", m.Validators), Time: timeChart(prefix+"validator-time", m)}
}
