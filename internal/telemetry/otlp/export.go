// Package otlp exports the gate's verdicts over OTLP with the OpenTelemetry
// SDK: a span per stop with a child per validator, and metrics of the same
// (docs/telemetry.md). Only gate-otel links it (see package telemetry). An
// export is abandoned at its deadline; a failure never changes a verdict.
package otlp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/telemetry"
)

// target is a request being exported.
type target struct {
	req           telemetry.Request
	getenv        func(key string) string // OTEL_* and the headers variable
	clientVersion string
}

// Export sends req's records, one resource per client, and returns when the
// collector has them or at the deadline, with the first error.
func Export(req telemetry.Request, getenv func(string) string) error {
	ctx, cancel := context.WithTimeout(context.Background(), req.Deadline)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- export(ctx, target{req: req, getenv: getenv, clientVersion: clientVersion(req.Transcript)})
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		// The SDK honours the context too; this is the bound if it does not.
		return fmt.Errorf("no answer from the collector within %s (the export was abandoned)", req.Deadline)
	}
}

func export(ctx context.Context, t target) error {
	dest, err := telemetry.Resolve(t.req.Config, t.getenv)
	if err != nil {
		return err
	}
	errs := &firstError{}
	otel.SetErrorHandler(errs) // the SDK's own complaints are this error, not log lines
	byClient := map[string][]outcome.Record{}
	var order []string
	for _, r := range t.req.Records {
		if _, ok := byClient[r.Client]; !ok {
			order = append(order, r.Client)
		}
		byClient[r.Client] = append(byClient[r.Client], r)
	}
	for _, client := range order {
		if err := exportClient(ctx, t, dest, client, byClient[client]); err != nil {
			return err
		}
	}
	return errs.get()
}

// exportClient sends one client's records through providers of their own,
// whose shutdown is the flush.
func exportClient(ctx context.Context, t target, dest telemetry.Destination, client string, records []outcome.Record) error {
	deadline := t.req.Deadline
	res, err := newResource(ctx, t, client)
	if err != nil {
		return err
	}
	spanExp, metricExp, err := exporters(ctx, dest, deadline)
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res),
		sdktrace.WithBatcher(spanExp, sdktrace.WithExportTimeout(deadline), sdktrace.WithMaxQueueSize(max(2048, 2*len(records)*4))))
	// The reader exports only when shut down: a hook lives a moment.
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(metricExp, sdkmetric.WithInterval(time.Hour), sdkmetric.WithTimeout(deadline))))
	ins, err := newInstruments(mp)
	if err == nil {
		tr := tp.Tracer(scopeName)
		for _, r := range records {
			stopSpans(ctx, tr, r)
			ins.record(ctx, r)
		}
	}
	return errors.Join(err, tp.Shutdown(ctx), mp.Shutdown(ctx))
}

// firstError keeps the first error the SDK reports to its global handler.
type firstError struct {
	mu  sync.Mutex
	err error
}

func (f *firstError) Handle(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
}

func (f *firstError) get() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// Usage prints gate-otel's usage, for -h and --help.
func Usage(w io.Writer) {
	fmt.Fprintln(w, "usage: gate-otel   (run by the gate when [telemetry] is on: one export request on stdin)")
	fmt.Fprintln(w, "  --version  the stopgate version and commit it was built from")
}

// Run is the gate-otel command: one telemetry.Request on stdin, exported.
func Run(env *cli.Env) error {
	data, err := io.ReadAll(io.LimitReader(env.Stdin, 1<<30))
	if err != nil {
		return err
	}
	var req telemetry.Request
	if err := json.Unmarshal(data, &req); err != nil {
		return fmt.Errorf("the request on stdin: %w", err)
	}
	if req.Deadline <= 0 {
		return fmt.Errorf("the request on stdin has no deadline")
	}
	return Export(req, env.Getenv)
}
