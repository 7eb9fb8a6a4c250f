package config

import (
	"fmt"

	"github.com/stopgate/stopgate/internal/validator"
)

// [settings] output_bytes bounds the bytes of a validator's output the
// gate keeps: enough for a test run's failures, bounded because the gate
// holds every validator's in memory at once.
const (
	DefaultOutputBytes = 64 << 10
	minOutputBytes     = 1 << 10
	maxOutputBytes     = 16 << 20
)

// output checks [settings] output_bytes and output, what of a validator's
// output the agent reads (docs/validator-output.md).
func (p *parser) output(raw rawSettings) {
	if v := raw.OutputBytes; v < minOutputBytes || v > maxOutputBytes {
		p.add("settings.output_bytes", fmt.Sprintf("%d is out of range %d..%d", v, minOutputBytes, maxOutputBytes), "")
	}
	if v := raw.Output; v != validator.OutputFailures && v != validator.OutputHead {
		p.add("settings.output", fmt.Sprintf("%q is not an output policy", v),
			`use "failures" (the failing tests first, then the output's end) or "head" (the output's first lines)`)
	}
}
