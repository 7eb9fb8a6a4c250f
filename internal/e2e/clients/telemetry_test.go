package clients

import (
	"testing"

	"github.com/stopgate/stopgate/internal/e2e"
)

// The Codex session of TestCodexBlockFixPass with [telemetry] pointing at a
// real collector: a blocked stop and the stop that passed arrive as spans
// with their validators' under them, from the client "codex".
func TestCodexTelemetry(t *testing.T) {
	col := e2e.StartCollector(t)
	p := NewProject(t, "codex")
	p.WriteFile("mappings.toml", p.ReadFile("mappings.toml")+e2e.TelemetryTable(col.HTTP, "http/protobuf", "10s"))
	r := codexBlockFixPass(t, p)
	checkBlockFixPass(t, p, "codex", r.Requests, r.Inputs)

	spans, points := e2e.SpansAndPoints(col.Stop())
	stops := map[string]e2e.Span{}
	for _, s := range spans {
		if s.Name == "stopgate.stop" {
			stops[s.Attrs["stopgate.verdict"]] = s
		}
	}
	if stops["block"].ID == "" || stops["pass"].ID == "" {
		t.Fatalf("stop spans by verdict: %v, want a block and a pass", stops)
	}
	for verdict, s := range stops {
		if s.Attrs["stopgate.client.name"] != "codex" || s.Resource["stopgate.client.name"] != "codex" || s.Resource["service.name"] != "stopgate" {
			t.Errorf("%s span: attributes %v, resource %v", verdict, s.Attrs, s.Resource)
		}
	}
	children := map[string]int{}
	for _, s := range spans {
		for verdict, stop := range stops {
			if s.Name == "stopgate.validator" && s.Parent == stop.ID {
				children[verdict+" "+s.Attrs["stopgate.validator.result"]]++
			}
		}
	}
	if children["block failed"] == 0 || children["pass passed"] == 0 || children["pass failed"] != 0 {
		t.Errorf("validator spans under the stops: %v", children)
	}
	blocks := 0
	for _, pt := range points {
		if pt.Metric == "stopgate.stops" && pt.Attrs["stopgate.verdict"] == "block" && pt.Attrs["stopgate.client.name"] == "codex" {
			blocks++
		}
	}
	if blocks == 0 {
		t.Errorf("no stopgate.stops point for codex's block: %v", points)
	}
}
