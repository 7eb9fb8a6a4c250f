package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/stopgate/stopgate/internal/bench"
)

// telemetryDeadline is the [telemetry] timeout of the measured rows: what a
// collector that hangs may add to a stop.
const telemetryDeadline = "500ms"

// telemetry times a blocked stop of one validator with telemetry off, and
// on towards a receiver that answers at once, a closed port, and a
// listener that never answers: what the export costs the stop, and that a
// hang costs the deadline, not more.
func (o *options) telemetry(t *bench.Table) error {
	rows := []string{"off", "to a receiver that answers", "to a closed port", "to a collector that hangs (deadline " + telemetryDeadline + ")"}
	name := func(r string) string { return "gate, blocked stop, telemetry " + r }
	some := false
	for _, r := range rows {
		some = some || o.wants(name(r))
	}
	if !some {
		return nil
	}
	if _, err := os.Stat(filepath.Join(o.bin, "gate-otel")); err != nil {
		for _, r := range rows {
			t.Add(name(r), "–", "–", "–", "–", "not measured: no gate-otel in "+o.bin)
		}
		return nil
	}
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer ok.Close()
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer hang.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := hang.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	closedURL := "http://" + closed.Addr().String()
	closed.Close()

	endpoints := []string{"", ok.URL, closedURL, "http://" + hang.Addr().String()}
	var cases []bench.Case
	for i, r := range rows {
		p := &bench.Project{Dir: filepath.Join(o.tmp, fmt.Sprintf("telemetry-%d", i)), Mappings: 1}
		// The validator fails: every run is a blocked stop, armed before it.
		conf := "[[mapping]]\nprompt = \"work\"\nvalidators = [\"fail\"]\n\n[validators.fail]\nrun = \"false\"\n"
		if endpoints[i] != "" {
			conf += fmt.Sprintf("\n[telemetry]\nenabled = true\nendpoint = %q\ntimeout = %q\n", endpoints[i], telemetryDeadline)
		}
		if err := os.MkdirAll(filepath.Dir(p.WorkPrompt()), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(p.Dir, "mappings.toml"), []byte(conf), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(p.WorkPrompt(), []byte(bench.PromptText), 0o644); err != nil {
			return err
		}
		session := "bench-telemetry"
		arm := &bench.Cmd{Path: o.detect, Dir: p.Dir, Env: o.env(p.Dir),
			Stdin: func(int) []byte { return bench.ReadEvent(p.Dir, session, p.WorkPrompt()) },
			Check: contains("additionalContext")}
		reset := filepath.Join(p.Dir, "tmp", "validation")
		cases = append(cases, bench.Case{Name: name(r),
			Cmd: &bench.Cmd{Path: o.gate, Dir: p.Dir, Env: o.env(p.Dir),
				Before: func(i int) error {
					os.RemoveAll(reset) // no block count carried over: never a halt
					_, err := arm.Run(i)
					return err
				},
				Stdin: func(int) []byte { return bench.StopEvent(p.Dir, session) },
				Check: contains(`"decision":"block"`)}})
	}
	o.logf("measuring telemetry's cost to a stop, 1+%d runs each", o.gateRuns)
	series := bench.Interleave(o.wanted(cases), 1, o.gateRuns)
	var off bench.Series
	for _, s := range series {
		if s.Name == name(rows[0]) {
			off = s
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	for _, s := range series {
		if s.Name == off.Name {
			o.row(t, s, "–", func() string { return "–" })
			continue
		}
		o.row(t, s, "telemetry off", func() string {
			if off.Err != nil || off.Name == "" {
				return "–"
			}
			return fmt.Sprintf("%+.1f ms", ms(s.Median()-off.Median()))
		})
	}
	return nil
}
