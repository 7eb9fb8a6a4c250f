package telemetry

import (
	"testing"

	"github.com/stopgate/stopgate/internal/config"
)

func TestResolve(t *testing.T) {
	tab := config.Telemetry{TelemetryKeys: config.TelemetryKeys{Enabled: true, Endpoint: "https://otel.example.com:4318/base", Protocol: config.TelemetryHTTP, HeadersEnv: "TEAM_HEADERS"}}
	for _, c := range []struct {
		name               string
		env                map[string]string
		protocol, endpoint string
		headers            map[string]string
		err                string
	}{
		{name: "table", env: map[string]string{"TEAM_HEADERS": "authorization=Bearer%20x, team = payments"},
			protocol: "http/protobuf", endpoint: "https://otel.example.com:4318/base", headers: map[string]string{"authorization": "Bearer x", "team": "payments"}},
		{name: "variables win", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_EXPORTER_OTLP_HEADERS": "a=b", "TEAM_HEADERS": "x=y"},
			protocol: "grpc"},
		{name: "bad protocol", env: map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, err: `OTEL_EXPORTER_OTLP_PROTOCOL="http/json": the gate exports over grpc or http/protobuf`},
		{name: "bad headers", env: map[string]string{"TEAM_HEADERS": "secret-without-equals"}, err: `headers in $TEAM_HEADERS: "secret-without-equals" is not key=value`},
	} {
		d, err := Resolve(tab, func(k string) string { return c.env[k] })
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%s: error %v, want %s", c.name, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		endpoint := ""
		if d.Endpoint != nil {
			endpoint = d.Endpoint.String()
		}
		if d.Protocol != c.protocol || endpoint != c.endpoint || len(d.Headers) != len(c.headers) {
			t.Errorf("%s: %+v, want %s %s %v", c.name, d, c.protocol, c.endpoint, c.headers)
		}
		for k, v := range c.headers {
			if d.Headers[k] != v {
				t.Errorf("%s: header %s = %q, want %q", c.name, k, d.Headers[k], v)
			}
		}
	}
}
