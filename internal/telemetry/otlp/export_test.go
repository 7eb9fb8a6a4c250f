package otlp

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	collmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	colltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/protobuf/proto"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/telemetry"
)

// receiver is an OTLP/HTTP endpoint that keeps what it is sent.
type receiver struct {
	mu      sync.Mutex
	traces  []*colltrace.ExportTraceServiceRequest
	metrics []*collmetrics.ExportMetricsServiceRequest
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	rc.mu.Lock()
	defer rc.mu.Unlock()
	switch r.URL.Path {
	case "/base/v1/traces":
		m := &colltrace.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(body, m); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		rc.traces = append(rc.traces, m)
	case "/base/v1/metrics":
		m := &collmetrics.ExportMetricsServiceRequest{}
		if err := proto.Unmarshal(body, m); err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		rc.metrics = append(rc.metrics, m)
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	w.WriteHeader(200)
}

func attrs(kvs []*common.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		v := kv.Value
		switch {
		case v.GetArrayValue() != nil:
			var ss []string
			for _, e := range v.GetArrayValue().Values {
				ss = append(ss, e.GetStringValue())
			}
			out[kv.Key] = "[" + join(ss) + "]"
		case v.GetStringValue() != "":
			out[kv.Key] = v.GetStringValue()
		default:
			out[kv.Key] = fmt.Sprint(v.GetBoolValue(), v.GetIntValue())
		}
	}
	return out
}

func join(ss []string) string {
	s := ""
	for i, x := range ss {
		if i > 0 {
			s += ","
		}
		s += x
	}
	return s
}

// A blocked stop and the stop that passed after it arrive as a stop span
// each with a child per validator, and as metrics, under a resource that
// names stopgate, the repository (from .git/config, credentials dropped),
// the client and its version (from the transcript), and the table's own.
func TestExportHTTP(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()

	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://user:token@git.example.com/acme/payments.git\n"), 0o644)
	transcript := filepath.Join(root, "t.jsonl")
	os.WriteFile(transcript, []byte(`{"type":"user","version":"2.1.328"}`+"\n"), 0o644)

	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	one, minus := 1, -1
	records := []outcome.Record{
		{Time: t0, Event: "Stop", Session: "s1", Prompts: []string{"joke"}, Decision: outcome.Block, Blocks: 1, Client: "claude", Cause: "validators_failed",
			Checks: []outcome.Check{
				{Name: "joke-file", Prompts: []string{"joke"}, Result: "failed", DurationMS: 1, Kind: "file"},
				{Name: "tests", Prompts: []string{"joke"}, Result: "exit status 1", DurationMS: 250, Kind: "run", ExitCode: &one, Confined: true},
				{Name: "slow", Prompts: []string{"joke"}, Result: "timed out after 10s", DurationMS: 10000, Kind: "run", ExitCode: &minus, TimedOut: true},
			}},
		{Time: t0.Add(time.Minute), Event: "Stop", Session: "s1", Prompts: []string{"joke"}, Decision: outcome.Pass, Client: "claude",
			Checks: []outcome.Check{{Name: "joke-file", Prompts: []string{"joke"}, Passed: true, Result: "passed", DurationMS: 1, Kind: "file"}}},
	}
	req := telemetry.Request{Root: root, Transcript: transcript, Deadline: 10 * time.Second, Records: records,
		Config: config.Telemetry{TelemetryKeys: config.TelemetryKeys{Enabled: true, Endpoint: srv.URL + "/base", Protocol: config.TelemetryHTTP,
			Resource: map[string]string{"team": "payments"}}, Timeout: time.Second}}
	env := map[string]string{"OTEL_RESOURCE_ATTRIBUTES": "deployment.environment.name=ci"}
	if err := Export(req, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}

	rc.mu.Lock()
	defer rc.mu.Unlock()
	var stops, validators int
	for _, tr := range rc.traces {
		for _, rs := range tr.ResourceSpans {
			res := attrs(rs.Resource.Attributes)
			for k, want := range map[string]string{"service.name": "stopgate", "vcs.repository.name": "payments",
				"vcs.repository.url.full": "https://git.example.com/acme/payments.git", "stopgate.client.name": "claude",
				"stopgate.client.version": "2.1.328", "team": "payments", "deployment.environment.name": "ci"} {
				if res[k] != want {
					t.Errorf("resource %s = %q, want %q", k, res[k], want)
				}
			}
			for _, ss := range rs.ScopeSpans {
				ids := map[string]bool{}
				for _, sp := range ss.Spans {
					if sp.Name == "stopgate.stop" {
						ids[string(sp.SpanId)] = true
					}
				}
				for _, sp := range ss.Spans {
					a := attrs(sp.Attributes)
					switch sp.Name {
					case "stopgate.stop":
						stops++
						if a["session.id"] != "s1" || a["stopgate.prompts"] != "[joke]" || a["stopgate.scope"] != "main" {
							t.Errorf("stop span attributes %v", a)
						}
						if a["stopgate.verdict"] == "block" && a["stopgate.reason.kind"] != "validators_failed" {
							t.Errorf("block span attributes %v", a)
						}
					case "stopgate.validator":
						validators++
						if !ids[string(sp.ParentSpanId)] {
							t.Errorf("validator span %v has no stop span for parent", a)
						}
						if a["stopgate.validator.name"] == "slow" && (a["stopgate.validator.result"] != "timed_out" || a["process.exit.code"] == "") {
							t.Errorf("slow validator span %v", a)
						}
						if a["stopgate.validator.name"] == "tests" {
							if a["stopgate.validator.result"] != "failed" || a["stopgate.validator.confined"] != "true 0" {
								t.Errorf("tests validator span %v", a)
							}
							if d := time.Duration(sp.EndTimeUnixNano - sp.StartTimeUnixNano); d != 250*time.Millisecond {
								t.Errorf("tests validator span lasts %v, want 250ms", d)
							}
						}
					}
				}
			}
		}
	}
	if stops != 2 || validators != 4 {
		t.Errorf("received %d stop spans and %d validator spans, want 2 and 4", stops, validators)
	}
	var names []string
	for _, m := range rc.metrics {
		for _, rm := range m.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, mt := range sm.Metrics {
					names = append(names, mt.Name)
				}
			}
		}
	}
	for _, want := range []string{"stopgate.stops", "stopgate.prompt.checks", "stopgate.validator.runs", "stopgate.validator.duration"} {
		if !slices.Contains(names, want) {
			t.Errorf("metrics %v lack %s", names, want)
		}
	}
}

// Observe mode's stops (the log's would-block and would-halt) count in
// stopgate.observe.would_blocks: the log never says "observe".
func TestExportObserve(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	root := t.TempDir()
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var records []outcome.Record
	for i, d := range []string{outcome.Pass, outcome.WouldBlock, outcome.WouldHalt} {
		records = append(records, outcome.Record{Time: t0.Add(time.Duration(i) * time.Minute), Event: "Stop", Session: "s1", Decision: d, Client: "claude"})
	}
	req := telemetry.Request{Root: root, Deadline: 10 * time.Second, Records: records,
		Config: config.Telemetry{TelemetryKeys: config.TelemetryKeys{Enabled: true, Endpoint: srv.URL + "/base", Protocol: config.TelemetryHTTP}, Timeout: time.Second}}
	if err := Export(req, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var got int64 = -1
	for _, m := range rc.metrics {
		for _, rm := range m.ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, mt := range sm.Metrics {
					if mt.Name == "stopgate.observe.would_blocks" {
						got = 0
						for _, dp := range mt.GetSum().GetDataPoints() {
							got += dp.GetAsInt()
						}
					}
				}
			}
		}
	}
	if got != 2 {
		t.Errorf("stopgate.observe.would_blocks = %d, want 2 (-1: not sent)", got)
	}
}

// A judge's span carries its model, the tokens its request counted, their
// cost, whether the cache answered and whether it gave no verdict (an
// error, never a failure of the work).
func TestExportJudge(t *testing.T) {
	rc := &receiver{}
	srv := httptest.NewServer(rc)
	defer srv.Close()
	records := []outcome.Record{{Time: time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC), Event: "Stop", Session: "s1", Prompts: []string{"release"}, Decision: outcome.Halt,
		Checks: []outcome.Check{
			{Name: "changelog", Prompts: []string{"release"}, Result: "failed", Kind: "judge", Model: "m1", InputTokens: 1000, OutputTokens: 50, CostUSD: 0.00375},
			{Name: "docs", Prompts: []string{"release"}, Result: "judge unavailable: no answer within 1s", Kind: "judge", Model: "m1", Unavailable: true},
		}}}
	req := telemetry.Request{Root: t.TempDir(), Deadline: 10 * time.Second, Records: records,
		Config: config.Telemetry{TelemetryKeys: config.TelemetryKeys{Enabled: true, Endpoint: srv.URL + "/base", Protocol: config.TelemetryHTTP}, Timeout: time.Second}}
	if err := Export(req, func(string) string { return "" }); err != nil {
		t.Fatal(err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	got := map[string]map[string]string{}
	for _, tr := range rc.traces {
		for _, rs := range tr.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					a := attrs(sp.Attributes)
					for _, kv := range sp.Attributes {
						if kv.Key == "stopgate.judge.cost_usd" {
							a[kv.Key] = fmt.Sprint(kv.Value.GetDoubleValue())
						}
					}
					got[a["stopgate.validator.name"]] = a
				}
			}
		}
	}
	want := map[string]map[string]string{
		"changelog": {"gen_ai.request.model": "m1", "gen_ai.usage.input_tokens": "false 1000", "gen_ai.usage.output_tokens": "false 50",
			"stopgate.judge.cost_usd": "0.00375", "stopgate.judge.cached": "false 0", "stopgate.validator.result": "failed"},
		"docs": {"stopgate.judge.unavailable": "true 0", "stopgate.validator.result": "error"},
	}
	for name, kvs := range want {
		for k, v := range kvs {
			if got[name][k] != v {
				t.Errorf("%s: %s = %q, want %q", name, k, got[name][k], v)
			}
		}
	}
}
