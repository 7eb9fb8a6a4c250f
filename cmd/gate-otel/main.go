// Command gate-otel exports the gate's verdicts over OTLP, apart so that the hooks do not link the OpenTelemetry SDK.
package main

import (
	"os"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/telemetry/otlp"
)

func main() { os.Exit(cli.Main("gate-otel", otlp.Run, otlp.Usage)) }
