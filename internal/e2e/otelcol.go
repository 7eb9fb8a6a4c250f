package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// otelcolRel is the collector scripts/install-otelcol builds with the
// collector's own builder: the OTLP receiver and the file exporter.
const otelcolRel = "tmp/e2e/otelcol/otelcol-stopgate"

// Collector is a real OpenTelemetry Collector on loopback, writing what it
// receives to a file as OTLP JSON, one request a line.
type Collector struct {
	HTTP, GRPC string // the receiver's endpoints, http://127.0.0.1:PORT
	out        string
	cmd        *exec.Cmd
	stderr     bytes.Buffer
}

// FreePort is a loopback port nothing listens on, for now.
func FreePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// StartCollector starts the collector scripts/install-otelcol built, or
// skips the test when it is not there.
func StartCollector(t testing.TB) *Collector {
	t.Helper()
	bin := filepath.Join(Root(t), otelcolRel)
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("no collector at %s (scripts/install-otelcol builds it; make test runs it)", otelcolRel)
	}
	dir := t.TempDir()
	httpPort, grpcPort := FreePort(t), FreePort(t)
	c := &Collector{HTTP: fmt.Sprintf("http://127.0.0.1:%d", httpPort), GRPC: fmt.Sprintf("http://127.0.0.1:%d", grpcPort), out: filepath.Join(dir, "received.jsonl")}
	conf := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
      grpc:
        endpoint: 127.0.0.1:%d
exporters:
  file:
    path: %s
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
    metrics:
      receivers: [otlp]
      exporters: [file]
`, httpPort, grpcPort, c.out)
	confPath := filepath.Join(dir, "otelcol.yaml")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c.cmd = exec.Command(bin, "--config=file:"+confPath)
	c.cmd.Stdout, c.cmd.Stderr = &c.stderr, &c.stderr
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Stop() })
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", httpPort))
		if err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector did not listen within 60s:\n%s", c.stderr.String())
		}
	}
	return c
}

// Stop ends the collector (it flushes the file on SIGTERM) and returns
// what it received.
func (c *Collector) Stop() []map[string]any {
	if c.cmd.ProcessState == nil {
		c.cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { c.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			c.cmd.Process.Kill()
			<-done
		}
	}
	data, _ := os.ReadFile(c.out)
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// Span is a span as the file exporter writes it, its attributes and
// its resource's flattened to strings.
type Span struct {
	Name, ID, Parent string
	Attrs, Resource  map[string]string
}

// Point is a metric data point, flattened likewise.
type Point struct {
	Metric string
	Attrs  map[string]string
	Value  string // asInt, or a histogram's count
}

func flatten(v any) map[string]string {
	out := map[string]string{}
	list, _ := v.([]any)
	for _, a := range list {
		kv, _ := a.(map[string]any)
		key, _ := kv["key"].(string)
		val, _ := kv["value"].(map[string]any)
		for typ, x := range val {
			switch typ {
			case "arrayValue":
				var parts []string
				vals, _ := x.(map[string]any)["values"].([]any)
				for _, e := range vals {
					parts = append(parts, fmt.Sprint(e.(map[string]any)["stringValue"]))
				}
				out[key] = strings.Join(parts, ",")
			default:
				out[key] = fmt.Sprint(x)
			}
		}
	}
	return out
}

// SpansAndPoints reads what the collector received.
func SpansAndPoints(received []map[string]any) ([]Span, []Point) {
	var spans []Span
	var points []Point
	each := func(v any, f func(map[string]any)) {
		list, _ := v.([]any)
		for _, e := range list {
			if m, ok := e.(map[string]any); ok {
				f(m)
			}
		}
	}
	for _, r := range received {
		each(r["resourceSpans"], func(rs map[string]any) {
			res := flatten(rs["resource"].(map[string]any)["attributes"])
			each(rs["scopeSpans"], func(ss map[string]any) {
				each(ss["spans"], func(s map[string]any) {
					name, _ := s["name"].(string)
					id, _ := s["spanId"].(string)
					parent, _ := s["parentSpanId"].(string)
					spans = append(spans, Span{Name: name, ID: id, Parent: parent, Attrs: flatten(s["attributes"]), Resource: res})
				})
			})
		})
		each(r["resourceMetrics"], func(rm map[string]any) {
			each(rm["scopeMetrics"], func(sm map[string]any) {
				each(sm["metrics"], func(m map[string]any) {
					name, _ := m["name"].(string)
					for _, kind := range []string{"sum", "histogram"} {
						data, ok := m[kind].(map[string]any)
						if !ok {
							continue
						}
						each(data["dataPoints"], func(dp map[string]any) {
							v := fmt.Sprint(dp["asInt"])
							if kind == "histogram" {
								v = fmt.Sprint(dp["count"])
							}
							points = append(points, Point{Metric: name, Attrs: flatten(dp["attributes"]), Value: v})
						})
					}
				})
			})
		})
	}
	return spans, points
}

// TelemetryTable is a [telemetry] table turning export on, to append to a
// mappings.toml.
func TelemetryTable(endpoint, protocol, timeout string) string {
	return fmt.Sprintf(`
[telemetry]
enabled  = true
endpoint = %q
protocol = %q
timeout  = %q

[telemetry.resource]
team = "e2e"
`, endpoint, protocol, timeout)
}
