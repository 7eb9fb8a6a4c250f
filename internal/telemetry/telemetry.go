// Package telemetry is the gate's side of the OTLP export: whether it is on, where it goes, and Send to gate-otel. Stdlib only (docs/telemetry.md).
package telemetry

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os/exec"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/trust/program"
)

// Request is what the gate sends the exporter on its stdin.
type Request struct {
	Config     config.Telemetry
	Root       string // the project, for vcs.repository.*
	Transcript string // the stop's transcript, for the client's version
	Deadline   time.Duration
	Records    []outcome.Record
}

// Enabled reports whether t exports: enabled = true, not OTEL_SDK_DISABLED=true.
func Enabled(t config.Telemetry, getenv func(string) string) bool {
	return t.Enabled && getenv("OTEL_SDK_DISABLED") != "true"
}

// Send runs the exporter on req, killed at req.Deadline; its error is stderr's last line.
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
	if err = cmd.Run(); ctx.Err() != nil {
		return fmt.Errorf("no answer from the collector within %s (the export was abandoned)", req.Deadline)
	}
	if out := strings.TrimSpace(stderr.String()); err != nil && out != "" {
		return errors.New(strings.TrimSpace(out[strings.LastIndex(out, "\n")+1:]))
	} else if err != nil {
		return fmt.Errorf("%s: %w", hook.Exporter, err)
	}
	return nil
}

// ExporterPath finds gate-otel beside the gate, never on PATH, which the agent can choose.
func ExporterPath() (string, error) {
	p, err := program.Stopgate(hook.Exporter)
	if err != nil {
		return "", fmt.Errorf("%w (make build builds it)", err)
	}
	return p, nil
}

// Destination is where an export goes: [telemetry] under the OTEL_EXPORTER_OTLP_* variables. The SDK reads those; a table value is an option only where none is set.
type Destination struct {
	Protocol    string
	Endpoint    *url.URL // from the table; nil: the variable's, or the SDK's default
	Headers     map[string]string
	where       string // for Describe: the endpoint, and whence; "": the default
	headersFrom string // for Describe
}

// Resolve reads the destination of t under the variables getenv reads.
func Resolve(t config.Telemetry, getenv func(string) string) (Destination, error) {
	d := Destination{Protocol: t.Protocol}
	if v, name := firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"); v != "" {
		if v != config.TelemetryHTTP && v != config.TelemetryGRPC {
			return d, fmt.Errorf("%s=%q: the gate exports over grpc or http/protobuf", name, v)
		}
		d.Protocol = v
	}
	if v, _ := firstSet(getenv, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"); v != "" {
		d.where = v + " (from OTEL_EXPORTER_OTLP_ENDPOINT)"
	} else if t.Endpoint != "" {
		u, err := url.Parse(t.Endpoint)
		if err != nil {
			return d, fmt.Errorf("endpoint: %w", err) // config checked it: not reached
		}
		d.Endpoint, d.where = u, u.String()
	}
	switch {
	case getenv("OTEL_EXPORTER_OTLP_HEADERS") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_HEADERS") != "":
		d.headersFrom = "OTEL_EXPORTER_OTLP_HEADERS"
	case t.HeadersEnv != "":
		d.headersFrom = "$" + t.HeadersEnv
		h, err := Pairs(getenv(t.HeadersEnv))
		if err != nil {
			return d, fmt.Errorf("headers in $%s: %w", t.HeadersEnv, err)
		}
		d.Headers = h
	}
	return d, nil
}

func firstSet(getenv func(string) string, names ...string) (string, string) {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v, n
		}
	}
	return "", ""
}

// Pairs reads "k=v,k2=v2", values percent-encoded, as OTEL_* lists are written; an entry that is not key=value or does not decode is left out, err says why.
func Pairs(s string) (pairs map[string]string, err error) {
	pairs = map[string]string{}
	for kv := range strings.SplitSeq(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		val, verr := url.PathUnescape(strings.TrimSpace(v))
		switch {
		case strings.TrimSpace(kv) == "":
		case !ok || k == "":
			err = cmp.Or(err, fmt.Errorf("%q is not key=value", kv)) // the header's name only: values are secrets
		case verr != nil:
			err = cmp.Or(err, fmt.Errorf("the value of %q: %w", k, verr))
		default:
			pairs[k] = val
		}
	}
	return pairs, err
}

// Describe says where telemetry goes, for gate check.
func Describe(t config.Telemetry, getenv func(string) string) string {
	if !t.Enabled {
		return "off ([telemetry] enabled = true turns it on)"
	}
	if getenv("OTEL_SDK_DISABLED") == "true" {
		return "off (OTEL_SDK_DISABLED=true)"
	}
	d, err := Resolve(t, getenv)
	if err != nil {
		return "on, but " + err.Error()
	}
	where := cmp.Or(d.where, map[bool]string{true: "localhost:4317", false: "http://localhost:4318"}[d.Protocol == config.TelemetryGRPC]+" (the default)")
	s := fmt.Sprintf("OTLP %s to %s", d.Protocol, where)
	if d.headersFrom != "" {
		s += ", headers from " + d.headersFrom
	}
	return s + fmt.Sprintf(", within %s a stop", t.Timeout)
}
