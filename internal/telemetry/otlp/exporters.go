package otlp

import (
	"context"
	"path"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/telemetry"
)

// exporters makes the span and metric exporters, without retries (a
// retry would outlive the deadline) and bounded by it.
func exporters(ctx context.Context, d telemetry.Destination, deadline time.Duration) (sdktrace.SpanExporter, sdkmetric.Exporter, error) {
	delta := func(sdkmetric.InstrumentKind) metricdata.Temporality { return metricdata.DeltaTemporality }
	if d.Protocol == config.TelemetryGRPC {
		topts := []otlptracegrpc.Option{otlptracegrpc.WithTimeout(deadline), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
		mopts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithTimeout(deadline), otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: false}), otlpmetricgrpc.WithTemporalitySelector(delta)}
		if u := d.Endpoint; u != nil {
			topts = append(topts, otlptracegrpc.WithEndpoint(u.Host))
			mopts = append(mopts, otlpmetricgrpc.WithEndpoint(u.Host))
			if u.Scheme == "http" {
				topts, mopts = append(topts, otlptracegrpc.WithInsecure()), append(mopts, otlpmetricgrpc.WithInsecure())
			}
		}
		if d.Headers != nil {
			topts, mopts = append(topts, otlptracegrpc.WithHeaders(d.Headers)), append(mopts, otlpmetricgrpc.WithHeaders(d.Headers))
		}
		se, err := otlptracegrpc.New(ctx, topts...)
		if err != nil {
			return nil, nil, err
		}
		me, err := otlpmetricgrpc.New(ctx, mopts...)
		return se, me, err
	}
	topts := []otlptracehttp.Option{otlptracehttp.WithTimeout(deadline), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false})}
	mopts := []otlpmetrichttp.Option{otlpmetrichttp.WithTimeout(deadline), otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}), otlpmetrichttp.WithTemporalitySelector(delta)}
	if u := d.Endpoint; u != nil {
		// Like OTEL_EXPORTER_OTLP_ENDPOINT: a base URL, the signal's path after it.
		topts = append(topts, otlptracehttp.WithEndpoint(u.Host), otlptracehttp.WithURLPath(path.Join("/", u.Path, "v1/traces")))
		mopts = append(mopts, otlpmetrichttp.WithEndpoint(u.Host), otlpmetrichttp.WithURLPath(path.Join("/", u.Path, "v1/metrics")))
		if u.Scheme == "http" {
			topts, mopts = append(topts, otlptracehttp.WithInsecure()), append(mopts, otlpmetrichttp.WithInsecure())
		}
	}
	if d.Headers != nil {
		topts, mopts = append(topts, otlptracehttp.WithHeaders(d.Headers)), append(mopts, otlpmetrichttp.WithHeaders(d.Headers))
	}
	se, err := otlptracehttp.New(ctx, topts...)
	if err != nil {
		return nil, nil, err
	}
	me, err := otlpmetrichttp.New(ctx, mopts...)
	return se, me, err
}
