package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func enableTelemetry(p *Project, endpoint, protocol, timeout string) {
	p.WriteFile("mappings.toml", p.ReadFile("mappings.toml")+TelemetryTable(endpoint, protocol, timeout))
}

// TestTelemetryToCollector: the joke session on the real client, blocked
// then passed, with [telemetry] pointing at a real collector: it receives a
// stop span per verdict with a validator span per validator under it, the
// metrics, and a resource naming stopgate, the repository, the client and
// its version; over OTLP/HTTP, and over gRPC.
func TestTelemetryToCollector(t *testing.T) {
	for _, protocol := range []string{"http/protobuf", "grpc"} {
		t.Run(strings.ReplaceAll(protocol, "/", "-"), func(t *testing.T) {
			col := StartCollector(t)
			p := NewStopgateProject(t)
			endpoint := col.HTTP
			if protocol == "grpc" {
				endpoint = col.GRPC
			}
			enableTelemetry(p, endpoint, protocol, "10s")
			r := playJoke(t, p)
			if n := gateRuns(r, "Stop"); n != 2 {
				r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
			}
			finish(t, p, r)
			if log := p.ReadFile(StateDir + "/outcomes.jsonl"); strings.Contains(log, `"telemetry"`) {
				t.Errorf("the outcome log notes a failed export:\n%s", log)
			}

			spans, points := SpansAndPoints(col.Stop())
			stops := map[string]Span{} // by verdict
			for _, s := range spans {
				if s.Name == "stopgate.stop" {
					stops[s.Attrs["stopgate.verdict"]] = s
				}
			}
			if len(stops) != 2 || stops["block"].ID == "" || stops["pass"].ID == "" {
				t.Fatalf("stop spans by verdict: %v, want a block and a pass\nspans: %+v", stops, spans)
			}
			block := stops["block"]
			for k, want := range map[string]string{"session.id": r.SessionID, "stopgate.client.name": "claude", "stopgate.scope": "main",
				"stopgate.event": "Stop", "stopgate.blocks": "1", "stopgate.prompts": "joke", "stopgate.reason.kind": "validators_failed", "stopgate.validators.failed": "2"} {
				if block.Attrs[k] != want {
					t.Errorf("block span %s = %q, want %q", k, block.Attrs[k], want)
				}
			}
			for k, want := range map[string]string{"service.name": "stopgate", "stopgate.client.name": "claude", "team": "e2e",
				"vcs.repository.name": filepath.Base(p.Dir)} {
				if block.Resource[k] != want {
					t.Errorf("resource %s = %q, want %q", k, block.Resource[k], want)
				}
			}
			if v := block.Resource["stopgate.client.version"]; v == "" || !strings.Contains(claudeVersion(t), v) {
				t.Errorf("resource stopgate.client.version = %q, want the client's (%s)", v, claudeVersion(t))
			}
			results := map[string]string{} // "verdict/validator" → result
			for _, s := range spans {
				if s.Name != "stopgate.validator" {
					continue
				}
				for verdict, stop := range stops {
					if s.Parent == stop.ID {
						results[verdict+"/"+s.Attrs["stopgate.validator.name"]] = s.Attrs["stopgate.validator.result"] + " " + s.Attrs["stopgate.validator.kind"]
					}
					if s.Attrs["stopgate.validator.name"] == "joke-file" && s.Attrs["stopgate.validator.expectation"] != "output/joke.txt must exist" {
						t.Errorf("joke-file's span: expectation %q, want %q", s.Attrs["stopgate.validator.expectation"], "output/joke.txt must exist")
					}
				}
			}
			for k, want := range map[string]string{"block/joke-file": "failed file", "block/joke-short": "failed file", "pass/joke-file": "passed file", "pass/joke-short": "passed file"} {
				if results[k] != want {
					t.Errorf("validator span %s: %q, want %q (all: %v)", k, results[k], want, results)
				}
			}
			sums := map[string]int{}
			for _, pt := range points {
				var n int
				fmt.Sscan(pt.Value, &n)
				switch pt.Metric {
				case "stopgate.stops":
					sums["stops "+pt.Attrs["stopgate.verdict"]] += n
				case "stopgate.validator.runs":
					sums["runs "+pt.Attrs["stopgate.validator.result"]] += n
				case "stopgate.validator.duration":
					sums["durations"] += n
				case "stopgate.prompt.checks":
					sums["prompt "+pt.Attrs["stopgate.prompt"]+" "+pt.Attrs["stopgate.prompt.result"]] += n
				}
			}
			for k, want := range map[string]int{"stops block": 1, "stops pass": 1, "runs failed": 2, "runs passed": 2, "durations": 4,
				"prompt joke failed": 1, "prompt joke passed": 1} {
				if sums[k] != want {
					t.Errorf("metric %s = %d, want %d (all: %v)", k, sums[k], want, sums)
				}
			}
		})
	}
}

func claudeVersion(t *testing.T) string {
	out, err := exec.Command(Claude(t), "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestTelemetryCollectorDownOrSlow: a collector that refuses connections
// or accepts and never answers changes no verdict, and holds the stop no
// longer than the export's deadline (bounded here in seconds; the cost is
// measured in make bench).
func TestTelemetryCollectorDownOrSlow(t *testing.T) {
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close()
	go func() {
		var held []net.Conn
		for {
			c, err := hang.Accept()
			if err != nil {
				for _, c := range held {
					c.Close()
				}
				return
			}
			held = append(held, c)
		}
	}()
	closed := fmt.Sprintf("http://127.0.0.1:%d", FreePort(t))
	const deadline = 2 * time.Second
	verdict := func(endpoint, protocol string) (string, time.Duration, string) {
		p := NewStopgateProject(t)
		if endpoint != "" {
			enableTelemetry(p, endpoint, protocol, deadline.String())
		}
		gate := filepath.Join(Stopgate(t), "gate")
		record := p.Path("t.jsonl") // the client's record of the session, as it would exist
		p.WriteFile("t.jsonl", "")
		for _, in := range []string{
			fmt.Sprintf(`{"session_id":"s1","transcript_path":%q,"cwd":%q,"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":%q}}`, record, p.Dir, p.Path("src/prompts/joke.md")),
		} {
			cmd := exec.Command(filepath.Join(Stopgate(t), "detect"))
			cmd.Dir, cmd.Stdin = p.Dir, strings.NewReader(in)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("detect: %v\n%s", err, out)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, gate)
		cmd.Dir = p.Dir
		cmd.Stdin = strings.NewReader(fmt.Sprintf(`{"session_id":"s1","transcript_path":%q,"cwd":%q,"hook_event_name":"Stop","stop_hook_active":false}`, record, p.Dir))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("gate: %v\n%s", err, stderr.String())
		}
		return stdout.String(), time.Since(start), stderr.String()
	}
	want, _, _ := verdict("", "")
	if !strings.Contains(want, `"decision":"block"`) {
		t.Fatalf("without telemetry the stop was not blocked: %s", want)
	}
	for _, c := range []struct{ name, endpoint, protocol string }{
		{"down, http", closed, "http/protobuf"},
		{"down, grpc", closed, "grpc"},
		{"hanging, http", "http://" + hang.Addr().String(), "http/protobuf"},
		{"hanging, grpc", "http://" + hang.Addr().String(), "grpc"},
	} {
		got, took, stderr := verdict(c.endpoint, c.protocol)
		if got != want {
			t.Errorf("%s: the answer changed:\n%s\nwant\n%s", c.name, got, want)
		}
		if !strings.HasPrefix(stderr, "gate: telemetry export failed: ") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: stderr %q, want one line saying the export failed", c.name, stderr)
		}
		// The deadline, and seconds of slack for a loaded machine: a hang
		// past it is what this bounds.
		if took > deadline+5*time.Second {
			t.Errorf("%s: the stop took %v, past the %v deadline", c.name, took, deadline)
		}
	}
}
