package settings

import "testing"

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
