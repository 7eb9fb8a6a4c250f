// Command gate-otel exports the gate's verdicts over OTLP: the gate runs
// it, with the records on stdin, when [telemetry] is on. It is a command of
// its own so that the OpenTelemetry SDK is linked here and not in the
// hooks, whose start-up it would slow even with telemetry off.
package main

import (
	"os"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/telemetry/otlp"
)

func main() { os.Exit(cli.Main("gate-otel", otlp.Run, otlp.Usage)) }
