package otlp

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/telemetry"
)

// Usage prints gate-otel's usage, for -h and --help.
func Usage(w io.Writer) {
	fmt.Fprintln(w, "usage: gate-otel   (run by the gate when [telemetry] is on: one export request on stdin)")
	fmt.Fprintln(w, "  --version  the stopgate version and commit it was built from")
}

// Run is the gate-otel command: one telemetry.Request on stdin, exported;
// exit 1 with one line on stderr when it fails.
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
