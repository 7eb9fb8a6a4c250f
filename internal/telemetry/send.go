// Package telemetry is the gate's side of exporting verdicts over OTLP:
// whether it is on, where it goes, and Send, which hands the records to the
// exporter (gate-otel) within a deadline. It is stdlib only: the SDK, in
// package otlp, would cost every start of the gate (docs/telemetry.md).
package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/trust/program"
)

// Exporter is the command that exports, beside the gate's executable.
const Exporter = hook.Exporter

// Request is what the gate sends the exporter on its stdin.
type Request struct {
	Config     config.Telemetry
	Root       string // the project, for vcs.repository.*
	Transcript string // the stop's transcript, for the client's version
	Deadline   time.Duration
	Records    []outcome.Record
}

// Enabled reports whether t exports: enabled = true, and not
// OTEL_SDK_DISABLED=true.
func Enabled(t config.Telemetry, getenv func(string) string) bool {
	return t.Enabled && getenv("OTEL_SDK_DISABLED") != "true"
}

// Send runs the exporter on req, killed at req.Deadline; its error is the
// exporter's last line on stderr.
func Send(req Request) error {
	bin, err := ExporterPath()
	if err != nil {
		return err
	}
	in, err := json.Marshal(req)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), req.Deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin)
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = bytes.NewReader(in), &stderr
	cmd.WaitDelay = 100 * time.Millisecond // a child holding stderr does not hold the gate
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("no answer from the collector within %s (the export was abandoned)", req.Deadline)
	case err != nil:
		if line := lastLine(stderr.String()); line != "" {
			return errors.New(line)
		}
		return fmt.Errorf("%s: %w", Exporter, err)
	}
	return nil
}

// ExporterPath finds gate-otel beside the running gate (program.Stopgate),
// never on PATH, which the agent can choose.
func ExporterPath() (string, error) {
	p, err := program.Stopgate(Exporter)
	if err != nil {
		return "", fmt.Errorf("%w (make build builds it)", err)
	}
	return p, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
