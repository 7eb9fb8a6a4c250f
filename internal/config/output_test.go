package config

import (
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/validator"
)

// TestParseOutput: [settings] output_bytes and output, their defaults and
// the values refused, each refusal located.
func TestParseOutput(t *testing.T) {
	tests := []struct {
		settings string
		bytes    int
		policy   string
		problem  string
	}{
		{"", DefaultOutputBytes, validator.OutputFailures, ""},
		{"output_bytes = 1024\noutput = \"head\"", 1024, validator.OutputHead, ""},
		{"output_bytes = 1023", 0, "", "mappings.toml:2: settings.output_bytes: 1023 is out of range 1024..16777216"},
		{"output_bytes = 16777217", 0, "", "mappings.toml:2: settings.output_bytes: 16777217 is out of range 1024..16777216"},
		{"output = \"tail\"", 0, "", `mappings.toml:2: settings.output: "tail" is not an output policy`},
	}
	for _, tt := range tests {
		cfg, err := Parse([]byte("[settings]\n"+tt.settings+"\n"), "/p/mappings.toml", "/p")
		switch {
		case tt.problem != "":
			if err == nil || strings.SplitN(err.Error(), "\n", 2)[0] != tt.problem {
				t.Errorf("%q: error %v, want %q", tt.settings, err, tt.problem)
			}
		case err != nil:
			t.Errorf("%q: %v", tt.settings, err)
		case cfg.Settings.OutputBytes != tt.bytes || cfg.Settings.Output != tt.policy:
			t.Errorf("%q: output_bytes %d, output %q, want %d and %q", tt.settings, cfg.Settings.OutputBytes, cfg.Settings.Output, tt.bytes, tt.policy)
		}
	}
}
