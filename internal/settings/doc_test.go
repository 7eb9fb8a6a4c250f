package settings

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

// Value is what encoding/json decodes (numbers as json.Number): the guard
// reads the commands of a file the gate parsed from it.
func TestDocValue(t *testing.T) {
	for _, in := range []string{
		`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "bin/gate", "timeout": 10}]}]}}`,
		`{"command": "a", "command": "b", "n": [1.5e3, -0, true, false, null, "\u00e9\n"]}`,
		`[{"bash": "x"}, [], {}]`,
		`"just a string"`,
	} {
		var want any
		dec := json.NewDecoder(bytes.NewReader([]byte(in)))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := Parse([]byte(in)).Value(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", in, got, want)
		}
	}
	if v := Parse([]byte(`{"a":`)).Value(); v != nil {
		t.Errorf("not JSON: Value = %#v, want nil", v)
	}
}

func TestDocDisablesHooks(t *testing.T) {
	for in, want := range map[string]bool{
		`{"disableAllHooks": true}`:                           true,
		`{"disableAllHooks": "yes"}`:                          true,
		`{"disableAllHooks": null}`:                           true,
		`{"disableAllHooks": false}`:                          false,
		`{"disableAllHooks": true, "disableAllHooks": false}`: false, // the last counts, as for the client
		`{}`:   false,
		``:     false,
		`[1]`:  false,
		`{"a"`: false, // not JSON: hookFindings reports it
	} {
		if got := Parse([]byte(in)).DisablesHooks(); got != want {
			t.Errorf("%q: DisablesHooks = %v, want %v", in, got, want)
		}
	}
}
