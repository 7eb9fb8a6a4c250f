package report

import (
	"fmt"
	"time"
)

// chart is a stacked column chart (verdicts per time bucket, with axes) or a
// horizontal bar chart (a row a bar or a stack); the template only places it.
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
	chartWidth = 900
	rowHeight  = 22
	labelWidth = 280
	valueWidth = 190
	// barWidth is a whole bar: a row's width without its label and value.
	barWidth float64 = chartWidth - labelWidth - valueWidth
)

func verdictChart(id string, m *model) chart {
	const top, bottom = 10, 250 // of the plot
	c := chart{ID: id, Width: chartWidth, Height: 280, PlotLeft: 50}
	peak := 1
	for _, b := range m.Buckets {
		peak = max(peak, b.Total)
	}
	peak = 4 * niceStep((peak+3)/4)
	plotW := float64(c.Width - c.PlotLeft - 10)
	plotH := float64(bottom - top)
	n := max(len(m.Buckets), 1)
	step := plotW / float64(n)
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

// round shows a duration to 3 significant figures or so.
func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.String()
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
