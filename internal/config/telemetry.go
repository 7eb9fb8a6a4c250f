package config

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sync"
	"time"
)

// Telemetry is the [telemetry] table: whether and where the gate exports
// each stop's verdict over OTLP (internal/telemetry).
type Telemetry struct {
	Enabled    bool
	Endpoint   string // a URL; "" is the SDK's default for the protocol
	Protocol   string // TelemetryHTTP or TelemetryGRPC
	HeadersEnv string // the name of a variable holding headers, "k=v,k2=v2"
	Timeout    time.Duration
	Repository string            // the vcs.repository.name; "" reads it from the project
	Resource   map[string]string // more resource attributes
}

// The [telemetry] protocols, as OTEL_EXPORTER_OTLP_PROTOCOL names them.
const (
	TelemetryHTTP = "http/protobuf"
	TelemetryGRPC = "grpc"
)

// DefaultTelemetryTimeout bounds an export per stop.
const (
	DefaultTelemetryTimeout = 2 * time.Second
	maxTelemetryTimeout     = 10 * time.Second
)

// rawTelemetry is [telemetry], decoded over defaultTelemetry.
type rawTelemetry struct {
	Enabled    bool              `toml:"enabled"`
	Endpoint   *string           `toml:"endpoint"`
	Protocol   string            `toml:"protocol"`
	HeadersEnv *string           `toml:"headers_env"`
	Timeout    string            `toml:"timeout"`
	Repository string            `toml:"repository"`
	Resource   map[string]string `toml:"resource"`
}

var defaultTelemetry = rawTelemetry{Protocol: TelemetryHTTP, Timeout: DefaultTelemetryTimeout.String()}

var envName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`) })

// httpURL reports whether s is an http or https URL with a host.
func httpURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func (p *parser) telemetry(t *Telemetry, raw rawTelemetry) {
	*t = Telemetry{Enabled: raw.Enabled, Protocol: raw.Protocol, Repository: raw.Repository, Resource: raw.Resource}
	if v := raw.Endpoint; v != nil {
		t.Endpoint = *v
		if !httpURL(*v) {
			p.add("telemetry.endpoint", fmt.Sprintf("%q is not an http or https URL", *v), `write it like "http://localhost:4318" (http/protobuf) or "http://localhost:4317" (grpc)`)
		}
	}
	p.oneOf("telemetry.protocol", raw.Protocol, "a protocol", `use "http/protobuf" (the default) or "grpc"`, TelemetryHTTP, TelemetryGRPC)
	if v := raw.HeadersEnv; v != nil {
		t.HeadersEnv = *v
		if !envName().MatchString(*v) {
			p.add("telemetry.headers_env", fmt.Sprintf("%q is not an environment variable's name", *v), `name the variable that holds the headers, e.g. "STOPGATE_OTLP_HEADERS"; never the headers themselves`)
		}
	}
	if t.Timeout = p.duration("telemetry.timeout", raw.Timeout); t.Timeout > maxTelemetryTimeout {
		p.add("telemetry.timeout", fmt.Sprintf("%q is longer than %s", raw.Timeout, maxTelemetryTimeout), "it is added to a stop whenever the collector is down or slow; the default is 2s")
	}
	for _, k := range slices.Sorted(maps.Keys(raw.Resource)) {
		if k == "" {
			p.add("telemetry.resource", "an attribute has an empty name", "")
		}
	}
}
