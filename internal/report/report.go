// Package report renders the outcome log as one self-contained HTML page (`gate report`) of inline SVG charts: it loads nothing (its CSP forbids it).
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

// Verdicts as charted, in stacking order; "observe" (a stop observe mode let through) only when the log has it.
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
	Halts      []outcome.Record         // newest first, at most maxHalts
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
		if c := cmp.Or(r.Client, "unknown"); r.Decision != outcome.Cleared { // no stop, and no client: gate clear is a person's
			byClient[c] = append(byClient[c], r) // "unknown": an older gate's log
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
	st := outcome.Summarize(records)
	m := &model{Title: title, Generated: now, Counts: map[string]int{}, From: st.From, To: st.To}
	m.Cleared, m.Total = st.Cleared, len(records)-st.Cleared
	var prompts, all []timing
	for _, p := range st.Prompts {
		prompts = append(prompts, timing{Name: p.Prompt, Runs: p.Checked, Fails: p.Checked - p.Passed})
	}
	for _, v := range st.Validators {
		all = append(all, timing{Name: v.Name, Runs: v.Runs, Fails: v.Runs - v.Passed, Total: v.Total, Median: v.Median, Max: v.Max})
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
		v := map[bool]string{true: "observe", false: r.Decision}[r.WouldStop()]
		m.Counts[v]++
		if i := int(m.Span.floor(r.Time).Sub(first) / m.Span.d); i >= 0 && i < len(m.Buckets) { // else a record out of time order
			m.Buckets[i].Counts[v]++
			m.Buckets[i].Total++
		}
	}
	for i := len(records) - 1; i >= 0 && len(m.Halts) < maxHalts; i-- {
		if r := records[i]; r.Decision == outcome.Halt {
			m.Halts = append(m.Halts, r)
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
		"round":  cli.Duration,
		"join":   strings.Join,
		"charts": func(c *model) view { return chartsOf(c, "client-"+c.Title+"-") }, // a client's own
		"clip":   func(s string) string { return cli.Clip(s, 40, "…") },             // a label fits its column
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
		All      view
		M        *model
		Verdicts []string
		Clients  chart
	}{chartsOf(m, ""), m, shown, clientChart(m)})
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
			return fmt.Sprintf("%s total, %d runs", cli.Duration(t.Total), t.Runs), t.Total.Seconds()
		})}
}

// chart is a stacked column chart (verdicts per time bucket, with axes) or a horizontal bar chart (a row a bar or a stack).
type chart struct {
	ID            string
	Width, Height int
	Groups        []group // the columns, or the rows
	Ticks, Labels []tick  // a column chart's y axis and x axis
	PlotLeft      int
}

// group is a column or a row of segs; a row has a label and a value.
type group struct {
	X, Y, W             float64
	Title, Label, Value string
	Segs                []seg
}

type seg struct {
	X, Y, W, H   float64
	Class, Title string
}

type tick struct {
	X, Y float64
	Text string
}

const (
	chartWidth         = 900
	rowHeight          = 22
	labelWidth         = 280
	valueWidth         = 190
	barWidth   float64 = chartWidth - labelWidth - valueWidth // a whole bar: a row's width without its label and value
)

func verdictChart(id string, m *model) chart {
	const top, bottom = 10, 250 // of the plot
	c := chart{ID: id, Width: chartWidth, Height: 280, PlotLeft: 50}
	peak := 1
	for _, b := range m.Buckets {
		peak = max(peak, b.Total)
	}
	peak = 4 * niceStep((peak+3)/4)
	plotH, n := float64(bottom-top), max(len(m.Buckets), 1)
	step := float64(c.Width-c.PlotLeft-10) / float64(n)
	for i := 0; i <= 4; i++ {
		v := peak * i / 4
		c.Ticks = append(c.Ticks, tick{X: float64(c.PlotLeft - 6), Y: float64(bottom) - plotH*float64(v)/float64(peak), Text: fmt.Sprint(v)})
	}
	every := max(1, n/8)
	for i, b := range m.Buckets {
		x, y, when := float64(c.PlotLeft)+step*float64(i), float64(bottom), b.Start.Format(time.DateTime)
		col := group{X: x, W: max(step*0.8, 1), Title: fmt.Sprintf("%s: %d stops", when, b.Total)}
		col.Segs = stack(b.Counts, plotH, peak, when, func(h float64) seg {
			y -= h
			return seg{X: x, Y: y, W: col.W, H: h}
		})
		c.Groups = append(c.Groups, col)
		if i%every == 0 {
			c.Labels = append(c.Labels, tick{X: x, Y: float64(bottom + 18), Text: b.Start.Format(m.Span.label)})
		}
	}
	return c
}

// stack lays out counts in verdict order, n of of taking n/of of full; place makes each seg.
func stack(counts map[string]int, full float64, of int, who string, place func(length float64) seg) []seg {
	var segs []seg
	for _, v := range verdicts {
		if n := counts[v]; n > 0 {
			s := place(full * float64(n) / float64(of))
			s.Class, s.Title = v, fmt.Sprintf("%s: %d %s", who, n, v)
			segs = append(segs, s)
		}
	}
	return segs
}

// barsOf draws a row for each of ts: value gives its words and its length.
func barsOf(id string, ts []timing, class string, value func(timing) (string, float64)) chart {
	b := newBars(id, len(ts))
	vals := make([]float64, len(ts))
	peak := 0.0
	for i, t := range ts {
		r := group{Y: float64(i * rowHeight), Label: t.Name}
		r.Value, vals[i] = value(t)
		b.Groups, peak = append(b.Groups, r), max(peak, vals[i])
	}
	for i := range b.Groups {
		r, w := &b.Groups[i], 0.0
		if peak > 0 {
			w = barWidth * vals[i] / peak
		}
		r.Segs = []seg{{X: labelWidth, Y: r.Y + 3, W: max(w, 1), H: rowHeight - 6, Class: class, Title: r.Label + ": " + r.Value}}
	}
	return b
}

func newBars(id string, rows int) chart {
	return chart{ID: id, Width: chartWidth, Height: max(rows, 1)*rowHeight + 4}
}

// clientChart stacks each client's verdicts in one bar, as shares.
func clientChart(m *model) chart {
	b := newBars("clients", len(m.Clients))
	for i, c := range m.Clients {
		// A client is charted for its stops: Total is never 0.
		r := group{Y: float64(i * rowHeight), Label: c.Title, Value: fmt.Sprintf("%d stops, %.0f%% blocked", c.Total, 100*float64(c.Counts["block"])/float64(c.Total))}
		x := float64(labelWidth)
		r.Segs = stack(c.Counts, barWidth, c.Total, c.Title, func(w float64) seg {
			s := seg{X: x, Y: r.Y + 3, W: w, H: rowHeight - 6}
			x += w
			return s
		})
		b.Groups = append(b.Groups, r)
	}
	return b
}

// niceStep rounds n up to 1, 2 or 5 times a power of ten: the axis's step.
func niceStep(n int) int {
	for p := 1; ; p *= 10 {
		for _, k := range []int{1, 2, 5} {
			if k*p >= n {
				return k * p
			}
		}
	}
}
