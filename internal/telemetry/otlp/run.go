package otlp

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/telemetry"
)

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
