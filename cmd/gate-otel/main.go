// Command gate-otel exports the gate's verdicts over OTLP, apart so that the hooks do not link the OpenTelemetry SDK.
package main

import (
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/telemetry/otlp"
)

func main() { cli.Main("gate-otel", otlp.Run, otlp.Usage) }
