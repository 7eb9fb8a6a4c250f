package config

import (
	"errors"
	"strings"
	"testing"
)

// TestDecoderReadsEveryField: each key the raw shapes' tags name (which
// unknownKeys takes as known) is read and type-checked by the decoder, so a
// field added to a shape without its reading fails here.
func TestDecoderReadsEveryField(t *testing.T) {
	header := map[string]string{"": "", "settings": "[settings]\n", "mapping": "[[mapping]]\n", "validators": "[validators.v]\n", "telemetry": "[telemetry]\n"}
	for table, names := range fields() {
		for _, name := range names {
			key, value := table+"."+name, "{}" // a table: the wrong type for every field
			if table == "" {
				key, value = name, "1"
			} else if table == "validators" {
				key = "validators.v." + name
			} else if key == "telemetry.resource" {
				value = "1" // the one field that is a table
			}
			_, err := Parse([]byte(header[table]+name+" = "+value+"\n"), "/p/mappings.toml", "/p")
			var p *Problem
			if !errors.As(err, &p) || p.Key != key || !strings.HasPrefix(p.Msg, "is ") || p.Line == 0 {
				t.Errorf("%s = %s: got %v, want a located type mismatch", key, value, err)
			}
		}
	}
}
