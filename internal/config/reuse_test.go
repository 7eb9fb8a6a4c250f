package config

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestReuseKeys(t *testing.T) {
	const head = "[[mapping]]\nprompt = \"p\"\nvalidators = [\"v\"]\n\n"
	for _, tc := range []struct {
		text  string
		reuse string
		in    []string
		err   string // the one problem's "line: key: message", "" for none
	}{
		{head + "[validators.v]\nrun = \"true\"\n", ReuseAuto, nil, ""},
		{"[settings]\nreuse = true\n" + head + "[validators.v]\nrun = \"true\"\n", ReuseOn, nil, ""},
		{"[settings]\nreuse = false\n" + head + "[validators.v]\nrun = \"true\"\n", ReuseOff, nil, ""},
		{head + "[validators.v]\nrun = \"true\"\ninputs = [\"**/*.go\", \"/go.mod\"]\n", ReuseAuto, []string{"**/*.go", "/go.mod"}, ""},
		{head + "[validators.v]\nrun = \"true\"\n\ninputs = [\"src/[x\"]\n", "", nil, `8: validators.v.inputs: pattern "src/[x" is not a valid glob`},
		{head + "[validators.v]\nrun = \"true\"\ninputs = []\n", "", nil, "7: validators.v.inputs: lists no pattern"},
		{head + "[validators.v]\nfile = \"x\"\ninputs = [\"x\"]\n", "", nil, "7: validators.v.inputs: applies to run validators only"},
		{"[settings]\nreuse = \"yes\"\n" + head + "[validators.v]\nrun = \"true\"\n", "", nil, "2: settings.reuse: is a string, want a boolean"},
	} {
		cfg, err := Parse([]byte(tc.text), "/p/mappings.toml", "/p")
		if tc.err != "" {
			var ps Problems
			if !errors.As(err, &ps) || len(ps) != 1 {
				t.Errorf("%q: err = %v, want one problem", tc.text, err)
				continue
			}
			got := strings.Join([]string{strconv.Itoa(ps[0].Line), ps[0].Key + ": " + ps[0].Msg}, ": ")
			if !strings.HasPrefix(got, tc.err) {
				t.Errorf("%q: problem %q, want %q", tc.text, got, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.text, err)
			continue
		}
		if cfg.Settings.Reuse != tc.reuse || strings.Join(cfg.Validators["v"].Inputs, ",") != strings.Join(tc.in, ",") {
			t.Errorf("%q: reuse %q inputs %q", tc.text, cfg.Settings.Reuse, cfg.Validators["v"].Inputs)
		}
	}
}
