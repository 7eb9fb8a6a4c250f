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
