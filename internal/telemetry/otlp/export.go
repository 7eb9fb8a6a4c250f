// Package otlp exports verdicts over OTLP with the OpenTelemetry SDK (docs/telemetry.md). Only gate-otel links it.
package otlp

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/telemetry"
)

// Export sends req's records, a resource per client, returning the first error once the collector has them or at the
// deadline (the gate kills it there too); getenv reads OTEL_* and the headers variable.
func Export(req telemetry.Request, getenv func(string) string) (err error) {
	ctx, cancel := context.WithTimeout(context.Background(), req.Deadline)
	defer cancel()
	defer func() {
		if ctx.Err() != nil {
			err = fmt.Errorf("no answer from the collector within %s (the export was abandoned)", req.Deadline)
		}
	}()
	dest, err := telemetry.Resolve(req.Config, getenv)
	if err != nil {
		return err
	}
	// The SDK's own complaints are this error, not log lines: the first is kept.
	errs := make(chan error, 1)
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		select {
		case errs <- err:
		default:
		}
	}))
	var clients []string
	for _, r := range req.Records {
		if !slices.Contains(clients, r.Client) {
			clients = append(clients, r.Client)
		}
	}
	for _, client := range clients {
		res, err := newResource(ctx, req, getenv, client)
		if err != nil {
			return err
		}
		mine := slices.DeleteFunc(slices.Clone(req.Records), func(r outcome.Record) bool { return r.Client != client })
		if err := exportClient(ctx, req.Deadline, dest, res, mine); err != nil {
			return err
		}
	}
	select {
	case err := <-errs:
		return err
	default:
		return nil
	}
}

// exportClient sends one client's records by providers whose shutdown is the flush.
func exportClient(ctx context.Context, deadline time.Duration, dest telemetry.Destination, res *resource.Resource, records []outcome.Record) error {
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

// Usage prints gate-otel's usage, for -h and --help.
func Usage(w io.Writer) {
	fmt.Fprintln(w, "usage: gate-otel   (run by the gate when [telemetry] is on: one export request on stdin)")
	fmt.Fprintln(w, "  --version  the stopgate version and commit it was built from")
}

// Run is the gate-otel command: one telemetry.Request on stdin, exported.
func Run(env *cli.Env) error {
	var req telemetry.Request
	if err := json.NewDecoder(env.Stdin).Decode(&req); err != nil {
		return fmt.Errorf("the request on stdin: %w", err)
	}
	if req.Deadline <= 0 {
		return fmt.Errorf("the request on stdin has no deadline")
	}
	return Export(req, env.Getenv)
}

// exporters makes the span and metric exporters, without retries (a retry would outlive the deadline) and bounded by it.
func exporters(ctx context.Context, d telemetry.Destination, deadline time.Duration) (sdktrace.SpanExporter, sdkmetric.Exporter, error) {
	delta := func(sdkmetric.InstrumentKind) metricdata.Temporality { return metricdata.DeltaTemporality }
	if d.Protocol == config.TelemetryGRPC {
		se, err := otlptracegrpc.New(ctx, optionsOf(d, "", otlptracegrpc.WithEndpoint, nil, otlptracegrpc.WithInsecure, otlptracegrpc.WithHeaders,
			otlptracegrpc.WithTimeout(deadline), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false}))...)
		if err != nil {
			return nil, nil, err
		}
		me, err := otlpmetricgrpc.New(ctx, optionsOf(d, "", otlpmetricgrpc.WithEndpoint, nil, otlpmetricgrpc.WithInsecure, otlpmetricgrpc.WithHeaders,
			otlpmetricgrpc.WithTimeout(deadline), otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: false}), otlpmetricgrpc.WithTemporalitySelector(delta))...)
		return se, me, err
	}
	se, err := otlptracehttp.New(ctx, optionsOf(d, "v1/traces", otlptracehttp.WithEndpoint, otlptracehttp.WithURLPath, otlptracehttp.WithInsecure, otlptracehttp.WithHeaders,
		otlptracehttp.WithTimeout(deadline), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))...)
	if err != nil {
		return nil, nil, err
	}
	me, err := otlpmetrichttp.New(ctx, optionsOf(d, "v1/metrics", otlpmetrichttp.WithEndpoint, otlpmetrichttp.WithURLPath, otlpmetrichttp.WithInsecure, otlpmetrichttp.WithHeaders,
		otlpmetrichttp.WithTimeout(deadline), otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}), otlpmetrichttp.WithTemporalitySelector(delta))...)
	return se, me, err
}

// optionsOf adds d's endpoint and headers to opts, by one exporter's option constructors; urlPath is nil for grpc, which has no path.
func optionsOf[O any](d telemetry.Destination, signal string, endpoint, urlPath func(string) O, insecure func() O, headers func(map[string]string) O, opts ...O) []O {
	if u := d.Endpoint; u != nil {
		opts = append(opts, endpoint(u.Host))
		if urlPath != nil {
			// Like OTEL_EXPORTER_OTLP_ENDPOINT: a base URL, the signal's path after it.
			opts = append(opts, urlPath(path.Join("/", u.Path, signal)))
		}
		if u.Scheme == "http" {
			opts = append(opts, insecure())
		}
	}
	if d.Headers != nil {
		opts = append(opts, headers(d.Headers))
	}
	return opts
}

// newResource describes the source: stopgate, the repository, the client; the
// OTEL_* variables win over the table, and it over the defaults (merged left to right).
func newResource(ctx context.Context, req telemetry.Request, getenv func(string) string, client string) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String(attrServiceName, "stopgate")}
	name, remote := repository(req.Root)
	for _, kv := range [][2]string{{"vcs.repository.name", cmp.Or(req.Config.Repository, name)}, {"vcs.repository.url.full", remote}, {attrClient, client},
		{"stopgate.client.version", clientVersion(req.Transcript)}} {
		if kv[1] != "" {
			attrs = append(attrs, attribute.String(kv[0], kv[1]))
		}
	}
	for k, v := range req.Config.Resource {
		attrs = append(attrs, attribute.String(k, v))
	}
	var env []attribute.KeyValue // OTEL_RESOURCE_ATTRIBUTES and OTEL_SERVICE_NAME
	pairs, _ := telemetry.Pairs(getenv("OTEL_RESOURCE_ATTRIBUTES"))
	for k, v := range pairs {
		env = append(env, attribute.String(k, v))
	}
	if s := getenv("OTEL_SERVICE_NAME"); s != "" {
		env = append(env, attribute.String(attrServiceName, s))
	}
	return resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(attrs...), resource.WithAttributes(env...))
}

// repository names the project: its folder's name, and origin's URL from .git/config (no git process per stop), without credentials.
func repository(root string) (name, remote string) {
	if root == "" {
		return "", ""
	}
	config, _ := os.ReadFile(filepath.Join(root, ".git", "config"))
	m := originURL.FindSubmatch(bytes.ReplaceAll(config, []byte("\r\n"), []byte("\n"))) // git reads CRLF lines too
	if m == nil {
		return filepath.Base(root), ""
	}
	remote = string(m[1])
	if u, err := url.Parse(remote); err == nil && u.User != nil {
		u.User = nil
		remote = u.String()
	}
	if base := strings.TrimSuffix(filepath.Base(strings.TrimSuffix(remote, "/")), ".git"); base != "" && base != "." {
		return base, remote
	}
	return filepath.Base(root), remote
}

// originURL is the url key of the section [remote "origin"] in a git config.
var originURL = regexp.MustCompile(`(?m)^[ \t]*\[remote "origin"\][ \t]*\n(?:[ \t]*(?:[^\[\s].*)?\n)*?[ \t]*url[ \t]*=[ \t]*(.*?)[ \t\r]*$`)

// clientVersion is the client's version from the transcript's tail (on each line).
func clientVersion(transcript string) string {
	f, err := os.Open(transcript)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 64 << 10
	end, _ := f.Seek(0, io.SeekEnd)
	buf, _ := io.ReadAll(io.NewSectionReader(f, max(0, end-tail), tail))
	m := transcriptVersion.FindAllSubmatch(buf, -1)
	if len(m) == 0 {
		return ""
	}
	return string(m[len(m)-1][1])
}

var transcriptVersion = regexp.MustCompile(`"version":"([0-9][0-9A-Za-z.+-]{0,40})"`)

// stopSpans writes r as a span with a child per validator; they ran side by
// side, so the span starts the longest's duration before the record's time.
func stopSpans(ctx context.Context, tr trace.Tracer, r outcome.Record) {
	var longest time.Duration
	failed := 0
	for _, c := range r.Checks {
		longest = max(longest, c.Duration())
		if !c.Passed && !c.Skipped {
			failed++
		}
	}
	start := r.Time.Add(-longest)
	attrs := []attribute.KeyValue{attribute.String(attrClient, r.Client), attribute.String("session.id", r.Session), attribute.String(attrEvent, r.Event),
		attribute.String("stopgate.scope", r.Scope()), attribute.String(attrVerdict, r.Decision), attribute.Int("stopgate.blocks", r.Blocks),
		attribute.StringSlice(attrPrompts, r.Prompts), attribute.Int("stopgate.validators.failed", failed)}
	for _, kv := range [][2]string{{"stopgate.agent.id", r.Agent}, {attrCause, r.Cause}} {
		if kv[1] != "" {
			attrs = append(attrs, attribute.String(kv[0], kv[1]))
		}
	}
	if len(r.Reconciled) > 0 {
		var ps []string
		for _, d := range r.Reconciled {
			ps = append(ps, d.Prompt)
		}
		attrs = append(attrs, attribute.StringSlice("stopgate.reconciled.prompts", ps))
	}
	ctx, span := tr.Start(ctx, "stopgate.stop", trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	if r.Decision == outcome.Halt {
		span.SetStatus(codes.Error, r.Cause)
		span.SetAttributes(attribute.String("error.type", "stopgate.halt"))
	}
	for _, c := range r.Checks {
		ca := []attribute.KeyValue{attribute.String(attrValidator, c.Name), attribute.String(attrKind, c.Kind), attribute.StringSlice(attrPrompts, c.Prompts),
			attribute.String(attrResult, result(c)), attribute.String("stopgate.validator.outcome", c.Result), attribute.Bool("stopgate.validator.timed_out", c.TimedOut),
			attribute.Bool("stopgate.validator.confined", c.Confined), attribute.Bool("stopgate.validator.reused", c.Reused)}
		if c.ExitCode != nil {
			ca = append(ca, attribute.Int("process.exit.code", *c.ExitCode))
		}
		if c.Expect != "" {
			ca = append(ca, attribute.String("stopgate.validator.expectation", c.Expect))
		}
		if c.Kind == "judge" {
			ca = append(ca, attribute.String("gen_ai.request.model", c.Model), attribute.Int("gen_ai.usage.input_tokens", c.InputTokens), attribute.Int("gen_ai.usage.output_tokens", c.OutputTokens),
				attribute.Float64("stopgate.judge.cost_usd", c.CostUSD), attribute.Bool("stopgate.judge.cached", c.Cached), attribute.Bool("stopgate.judge.unavailable", c.Unavailable))
		}
		_, cs := tr.Start(ctx, "stopgate.validator", trace.WithTimestamp(start), trace.WithAttributes(ca...))
		if !c.Passed && !c.Skipped {
			cs.SetStatus(codes.Error, c.Result)
		}
		cs.End(trace.WithTimestamp(start.Add(c.Duration())))
	}
	span.End(trace.WithTimestamp(r.Time))
}

// result classes a validator's run (docs/telemetry.md).
func result(c outcome.Check) string {
	switch {
	case c.Passed:
		return "passed"
	case c.Skipped:
		return "skipped"
	case c.TimedOut:
		return "timed_out"
	case c.ExitCode != nil && *c.ExitCode < 0, c.Unavailable:
		return "error"
	}
	return "failed"
}

// instruments are the metrics, counted per record.
type instruments struct {
	stops, prompts, runs, halts, wouldBlocks metric.Int64Counter
	duration                                 metric.Float64Histogram
}

func newInstruments(mp metric.MeterProvider) (*instruments, error) {
	m := mp.Meter(scopeName)
	var ins instruments
	var errs [6]error
	ins.stops, errs[0] = m.Int64Counter("stopgate.stops", metric.WithUnit("{stop}"), metric.WithDescription("Stops judged, by verdict."))
	ins.prompts, errs[1] = m.Int64Counter("stopgate.prompt.checks", metric.WithUnit("{check}"), metric.WithDescription("Prompts checked at a stop, by whether all their validators passed."))
	ins.runs, errs[2] = m.Int64Counter("stopgate.validator.runs", metric.WithUnit("{run}"), metric.WithDescription("Validator runs, by result."))
	ins.halts, errs[3] = m.Int64Counter("stopgate.halts", metric.WithUnit("{stop}"), metric.WithDescription("Stops that halted the session, by reason kind."))
	ins.wouldBlocks, errs[4] = m.Int64Counter("stopgate.observe.would_blocks", metric.WithUnit("{stop}"), metric.WithDescription("Stops a gate in observe mode let through that it would have blocked or halted."))
	ins.duration, errs[5] = m.Float64Histogram("stopgate.validator.duration", metric.WithUnit("s"), metric.WithDescription("Validator run time."),
		metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300))
	return &ins, errors.Join(errs[:]...)
}

func (ins *instruments) record(ctx context.Context, r outcome.Record) {
	client := attribute.String(attrClient, r.Client)
	ins.stops.Add(ctx, 1, metric.WithAttributes(attribute.String(attrVerdict, r.Decision), client, attribute.String(attrEvent, r.Event)))
	switch {
	case r.Decision == outcome.Halt:
		ins.halts.Add(ctx, 1, metric.WithAttributes(attribute.String(attrCause, r.Cause), client))
	case r.WouldStop():
		ins.wouldBlocks.Add(ctx, 1, metric.WithAttributes(client))
	}
	for _, p := range r.Prompts {
		checked, passed := r.PromptResult(p)
		res := map[bool]string{true: "failed", false: "passed"}[checked && !passed]
		ins.prompts.Add(ctx, 1, metric.WithAttributes(attribute.String("stopgate.prompt", p), attribute.String("stopgate.prompt.result", res), client))
	}
	for _, c := range r.Checks {
		attrs := metric.WithAttributes(attribute.String(attrValidator, c.Name), attribute.String(attrResult, result(c)), attribute.String(attrKind, c.Kind))
		ins.runs.Add(ctx, 1, attrs)
		ins.duration.Record(ctx, c.Duration().Seconds(), attrs)
	}
}

// The names used more than once; docs/telemetry.md lists them all, following
// OpenTelemetry's semantic conventions where one applies, stopgate.* otherwise.
const (
	attrServiceName = "service.name"
	attrClient      = "stopgate.client.name"
	attrEvent       = "stopgate.event"
	attrVerdict     = "stopgate.verdict"
	attrCause       = "stopgate.reason.kind"
	attrPrompts     = "stopgate.prompts"
	attrValidator   = "stopgate.validator.name"
	attrKind        = "stopgate.validator.kind"
	attrResult      = "stopgate.validator.result"
	scopeName       = "github.com/stopgate/stopgate/internal/telemetry"
)
