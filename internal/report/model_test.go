package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/outcome"
)

// Observe mode's stops (the log's would-block and would-halt) are charted
// as one "observe" verdict, with its key: the log never says "observe".
func TestObserveCharted(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	var records []outcome.Record
	for i, d := range []string{outcome.Pass, outcome.WouldBlock, outcome.WouldHalt} {
		records = append(records, outcome.Record{Time: t0.Add(time.Duration(i) * time.Minute), Event: "Stop", Session: "s", Decision: d, Client: "claude"})
	}
	m := build(records, "t", t0.Add(time.Hour))
	if m.Counts["observe"] != 2 || m.Counts[outcome.Pass] != 1 {
		t.Errorf("counts %v, want observe 2 and pass 1", m.Counts)
	}
	var b bytes.Buffer
	if err := Write(&b, records, "t", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `<i class="observe"></i>observe`) {
		t.Error("the page has no observe key")
	}
}

// A record of gate clear is a person's decision, not a stop: the header's
// stops are the sum of its verdicts and of its clients, and no client
// called "unknown" stands for gate clear, which has none.
func TestTotalsAddUp(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	var records []outcome.Record
	for i, d := range []string{outcome.Pass, outcome.Block, outcome.Cleared, outcome.Halt, outcome.WouldBlock, outcome.Cleared} {
		r := outcome.Record{Time: t0.Add(time.Duration(i) * time.Minute), Event: "Stop", Session: "s", Decision: d, Client: "claude"}
		if d == outcome.Cleared {
			r.Event, r.Client = "clear", ""
		}
		records = append(records, r)
	}
	m := build(records, "t", t0.Add(time.Hour))
	verdictSum, clientSum := 0, 0
	for _, v := range verdicts {
		verdictSum += m.Counts[v]
	}
	for _, c := range m.Clients {
		clientSum += c.Total
		if c.Title != "claude" {
			t.Errorf("a client called %q (%d stops)", c.Title, c.Total)
		}
	}
	if m.Total != 4 || verdictSum != m.Total || clientSum != m.Total || m.Cleared != 2 {
		t.Errorf("%d stops, verdicts add up to %d, clients to %d, %d cleared; want 4, 4, 4 and 2", m.Total, verdictSum, clientSum, m.Cleared)
	}
	var b bytes.Buffer
	if err := Write(&b, records, "t", t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "4 stops judged from 2026-03-01 08:00 to 2026-03-01 08:05 UTC; 2 cleared by a person (gate clear);") {
		t.Error("the page's header does not say 4 stops judged and 2 cleared")
	}
}
