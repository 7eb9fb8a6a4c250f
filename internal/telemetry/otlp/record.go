package otlp

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/stopgate/stopgate/internal/outcome"
)

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
		res := "passed"
		if checked, passed := r.PromptResult(p); checked && !passed {
			res = "failed"
		}
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
