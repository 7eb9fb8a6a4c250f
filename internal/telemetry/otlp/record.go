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

// stopSpans writes r as a span with a child per validator. The validators
// ran side by side, ending by the time of the record: the stop's span
// starts with them, the longest's duration before it ends.
func stopSpans(ctx context.Context, tr trace.Tracer, r outcome.Record) {
	end := r.Time
	var longest time.Duration
	for _, c := range r.Checks {
		longest = max(longest, c.Duration())
	}
	start := end.Add(-longest)
	attrs := []attribute.KeyValue{
		attribute.String(attrClient, r.Client),
		attribute.String(attrSession, r.Session),
		attribute.String(attrEvent, r.Event),
		attribute.String(attrScope, r.Scope()),
		attribute.String(attrVerdict, r.Decision),
		attribute.Int(attrBlocks, r.Blocks),
		attribute.StringSlice(attrPrompts, r.Prompts),
		attribute.Int(attrFailed, failed(r)),
	}
	if r.Agent != "" {
		attrs = append(attrs, attribute.String(attrAgent, r.Agent))
	}
	if r.Cause != "" {
		attrs = append(attrs, attribute.String(attrCause, r.Cause))
	}
	if len(r.Reconciled) > 0 {
		var ps []string
		for _, d := range r.Reconciled {
			ps = append(ps, d.Prompt)
		}
		attrs = append(attrs, attribute.StringSlice(attrReconcile, ps))
	}
	ctx, span := tr.Start(ctx, spanStop, trace.WithTimestamp(start), trace.WithAttributes(attrs...))
	if r.Decision == outcome.Halt {
		span.SetStatus(codes.Error, r.Cause)
		span.SetAttributes(attribute.String(attrErrorType, "stopgate.halt"))
	}
	for _, c := range r.Checks {
		ca := []attribute.KeyValue{
			attribute.String(attrValidator, c.Name),
			attribute.String(attrKind, c.Kind),
			attribute.StringSlice(attrPrompts, c.Prompts),
			attribute.String(attrResult, result(c)),
			attribute.String(attrOutcome, c.Result),
			attribute.Bool(attrTimedOut, c.TimedOut),
			attribute.Bool(attrConfined, c.Confined),
			attribute.Bool(attrReused, c.Reused),
		}
		if c.ExitCode != nil {
			ca = append(ca, attribute.Int(attrExitCode, *c.ExitCode))
		}
		if c.Expect != "" {
			ca = append(ca, attribute.String(attrExpect, c.Expect))
		}
		if c.Kind == "judge" {
			ca = append(ca, attribute.String(attrModel, c.Model), attribute.Int(attrInTokens, c.InputTokens), attribute.Int(attrOutTokens, c.OutputTokens),
				attribute.Float64(attrCost, c.CostUSD), attribute.Bool(attrCached, c.Cached), attribute.Bool(attrUnavailable, c.Unavailable))
		}
		_, cs := tr.Start(ctx, spanValidator, trace.WithTimestamp(start), trace.WithAttributes(ca...))
		if !c.Passed && !c.Skipped {
			cs.SetStatus(codes.Error, c.Result)
		}
		cs.End(trace.WithTimestamp(start.Add(c.Duration())))
	}
	span.End(trace.WithTimestamp(end))
}

// result classes a validator's run: passed, failed (it judged the work
// wanting), timed_out, error (it could not judge: not started, killed),
// or skipped (when_changed: not run).
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

func failed(r outcome.Record) int {
	n := 0
	for _, c := range r.Checks {
		if !c.Passed && !c.Skipped {
			n++
		}
	}
	return n
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
	ins.stops, errs[0] = m.Int64Counter(metricStops, metric.WithUnit("{stop}"), metric.WithDescription("Stops judged, by verdict."))
	ins.prompts, errs[1] = m.Int64Counter(metricPrompts, metric.WithUnit("{check}"), metric.WithDescription("Prompts checked at a stop, by whether all their validators passed."))
	ins.runs, errs[2] = m.Int64Counter(metricRuns, metric.WithUnit("{run}"), metric.WithDescription("Validator runs, by result."))
	ins.halts, errs[3] = m.Int64Counter(metricHalts, metric.WithUnit("{stop}"), metric.WithDescription("Stops that halted the session, by reason kind."))
	ins.wouldBlocks, errs[4] = m.Int64Counter(metricWouldBlocks, metric.WithUnit("{stop}"), metric.WithDescription("Stops a gate in observe mode let through that it would have blocked or halted."))
	ins.duration, errs[5] = m.Float64Histogram(metricDuration, metric.WithUnit("s"), metric.WithDescription("Validator run time."),
		metric.WithExplicitBucketBoundaries(0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300))
	if err := errors.Join(errs[:]...); err != nil {
		return nil, err
	}
	return &ins, nil
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
		ins.prompts.Add(ctx, 1, metric.WithAttributes(attribute.String(attrPrompt, p), attribute.String(attrPromptRes, res), client))
	}
	for _, c := range r.Checks {
		attrs := metric.WithAttributes(attribute.String(attrValidator, c.Name), attribute.String(attrResult, result(c)), attribute.String(attrKind, c.Kind))
		ins.runs.Add(ctx, 1, attrs)
		ins.duration.Record(ctx, c.Duration().Seconds(), attrs)
	}
}
