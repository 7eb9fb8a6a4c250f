// Package telemetry is the gate's side of exporting verdicts over OTLP:
// whether telemetry is on and where it goes ([telemetry] with the
// standard OTEL_EXPORTER_OTLP_* variables over it), and Send, which hands
// the records to the exporter, the gate-otel command, within a deadline.
//
// The OpenTelemetry SDK lives in package otlp, linked by gate-otel alone:
// the gate and detect start on every stop and tool call, and the SDK's
// package initialisation (gRPC, protobuf) would cost each start even with
// telemetry off (docs/telemetry.md has the numbers). This package is
// stdlib only.
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

// Send runs the exporter on req and waits for it until req.Deadline at
// the latest: then it is killed, and the error says so. Its error is the
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

// ExporterPath finds gate-otel beside the running gate, where make build
// and make install put it (program.Stopgate): never on PATH, which a settings
// file's env or a folder of the project can make the agent's.
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
