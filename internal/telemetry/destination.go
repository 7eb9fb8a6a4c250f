package telemetry

import (
	"cmp"
	"fmt"
	"net/url"
	"strings"

	"github.com/stopgate/stopgate/internal/config"
)

// Destination is where an export goes: [telemetry] with the standard
// OTEL_EXPORTER_OTLP_* variables over it. The SDK reads the variables; a
// table value is an option only where no variable is set, as an option
// would override it.
type Destination struct {
	Protocol    string
	Endpoint    *url.URL // from the table; nil: the variable's, or the SDK's default
	envURL      string   // the variable's, for Describe
	Headers     map[string]string
	headersFrom string // for Describe
}

var protocolVars = []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"}
var endpointVars = []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"}

// Resolve reads the destination of t under the variables getenv reads.
func Resolve(t config.Telemetry, getenv func(string) string) (Destination, error) {
	d := Destination{Protocol: t.Protocol}
	if v, name := firstSet(getenv, protocolVars); v != "" {
		if v != config.TelemetryHTTP && v != config.TelemetryGRPC {
			return d, fmt.Errorf("%s=%q: the gate exports over grpc or http/protobuf", name, v)
		}
		d.Protocol = v
	}
	if v, _ := firstSet(getenv, endpointVars); v != "" {
		d.envURL = v
	} else if t.Endpoint != "" {
		u, err := url.Parse(t.Endpoint)
		if err != nil {
			return d, fmt.Errorf("endpoint: %w", err) // config checked it: not reached
		}
		d.Endpoint = u
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

func firstSet(getenv func(string) string, names []string) (string, string) {
	for _, n := range names {
		if v := getenv(n); v != "" {
			return v, n
		}
	}
	return "", ""
}

// Pairs reads "k=v,k2=v2", values percent-encoded, as the OTEL_* list
// variables are written. An entry that is not key=value or does not decode
// is left out, and err says why the first was.
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
	where := ""
	switch {
	case d.envURL != "":
		where = d.envURL + " (from OTEL_EXPORTER_OTLP_ENDPOINT)"
	case d.Endpoint != nil:
		where = d.Endpoint.String()
	case d.Protocol == config.TelemetryGRPC:
		where = "localhost:4317 (the default)"
	default:
		where = "http://localhost:4318 (the default)"
	}
	s := fmt.Sprintf("OTLP %s to %s", d.Protocol, where)
	if d.headersFrom != "" {
		s += ", headers from " + d.headersFrom
	}
	return s + fmt.Sprintf(", within %s a stop", t.Timeout)
}
