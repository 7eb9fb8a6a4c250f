package main

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"

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
	names := []string{"off", "to a receiver that answers", "to a closed port", "to a collector that hangs (deadline " + telemetryDeadline + ")"}
	for i := range names {
		names[i] = "gate, blocked stop, telemetry " + names[i]
	}
	if !slices.ContainsFunc(names, o.wants) {
		return nil
	}
	if _, err := os.Stat(filepath.Join(o.bin, "gate-otel")); err != nil {
		for _, name := range names {
			row(t, bench.Series{Name: name, Err: errors.New("no gate-otel in " + o.bin)}, "", "")
		}
		return nil
	}
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer ok.Close()
	// A listener that never accepts: the kernel completes the connection,
	// and the request waits for an answer that never comes.
	hang, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer hang.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	closed.Close()

	endpoints := []string{"", ok.URL, "http://" + closed.Addr().String(), "http://" + hang.Addr().String()}
	var cases []bench.Case
	for i, name := range names {
		// The validator fails: every run is a blocked stop, armed before it.
		conf := "[[mapping]]\nprompt = \"work\"\nvalidators = [\"fail\"]\n\n[validators.fail]\nrun = \"false\"\n"
		if endpoints[i] != "" {
			conf += fmt.Sprintf("\n[telemetry]\nenabled = true\nendpoint = %q\ntimeout = %q\n", endpoints[i], telemetryDeadline)
		}
		p, err := bench.WriteWorkProject(filepath.Join(o.tmp, fmt.Sprintf("telemetry-%d", i)), conf)
		if err != nil {
			return err
		}
		c := o.armedStop(o.gate, p, func(int) string { return "bench-telemetry" }, contains(`"decision":"block"`))
		arm := c.Before
		c.Before = func(i int) error {
			os.RemoveAll(filepath.Join(p.Dir, "tmp", "validation")) // no block count carried over: never a halt
			return arm(i)
		}
		cases = append(cases, bench.Case{Name: name, Cmd: c})
	}
	o.logf("measuring telemetry's cost to a stop, 1+%d runs each", o.gateRuns)
	rows(t, bench.Interleave(append(cases[:1], o.wanted(cases[1:])...), 1, o.gateRuns), "telemetry off", "–", delta)
	return nil
}
