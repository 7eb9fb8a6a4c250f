package testhook

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/validator"
)

func TestParseValid(t *testing.T) {
	jsonSuite := `{
  "version": "1.0",
  "description": "demo",
  "tests": [
    {"id": "login", "description": "log in", "category": "auth", "action": "log in",
     "expect": [{"contains": "ok"}, {"not_contains": "error"}, {"regex": "token: \\w+"}],
     "save": {"token": "token: (\\w+)", "at": "at (\\d+)"}, "tags": ["smoke", "auth"]},
    {"id": "me", "action": "whoami with ${token}", "expect": [{"regex": "^user ${token}$"}]}
  ]
}`
	tomlSuite := `version = 1
description = "demo"

[[test]]
id = "login"
description = "log in"
category = "auth"
action = "log in"
expect = [{ contains = "ok" }, { not_contains = "error" }, { regex = 'token: \w+' }]
save = { token = 'token: (\w+)', at = 'at (\d+)' }
tags = ["smoke", "auth"]

[[test]]
id = "me"
action = "whoami with ${token}"
[[test.expect]]
regex = '^user ${token}$'
`
	want := []Test{
		{ID: "login", Description: "log in", Category: "auth", Action: "log in",
			Expect: []validator.Expectation{{Kind: "contains", Pattern: "ok"}, {Kind: "not_contains", Pattern: "error"}, {Kind: "regex", Pattern: `token: \w+`}},
			Save:   []Save{{"at", `at (\d+)`}, {"token", `token: (\w+)`}}, Tags: []string{"smoke", "auth"}},
		{ID: "me", Category: DefaultCategory, Action: "whoami with ${token}", Expect: []validator.Expectation{{Kind: "regex", Pattern: "^user ${token}$"}}},
	}
	for _, tc := range []struct {
		file, text string
		lines      []int
		version    string
	}{
		{"tests.json", jsonSuite, []int{5, 8}, "1.0"},
		{"tests.toml", tomlSuite, []int{4, 13}, "1"},
		{"suite.txt", jsonSuite, []int{5, 8}, "1.0"}, // sniffed
	} {
		t.Run(tc.file, func(t *testing.T) {
			s, err := Parse([]byte(tc.text), "/p/"+tc.file, "/p")
			if err != nil {
				t.Fatal(err)
			}
			if s.File != tc.file || s.Version != tc.version || s.Description != "demo" {
				t.Errorf("suite = %q %q %q", s.File, s.Version, s.Description)
			}
			for i := range want {
				w := want[i]
				w.Line = tc.lines[i]
				if !reflect.DeepEqual(s.Tests[i], w) {
					t.Errorf("test %d =\n%+v\nwant\n%+v", i, s.Tests[i], w)
				}
			}
		})
	}
}

func TestParseProblems(t *testing.T) {
	for _, tc := range []struct {
		name, file, text string
		want             []string // each problem's Error(), in order
	}{
		{"unknown test key", "t.json", `{"tests": [
  {"id": "a", "action": "x", "expects": []}
]}`, []string{`t.json:2: test "a": unknown key "expects"`}},
		{"unknown top key", "t.json", `{"version": "1", "test": [], "tests": [{"id": "a", "action": "x"}]}`,
			[]string{`t.json: unknown key "test"`}},
		{"unknown key in toml", "t.toml", "[[test]]\nid = \"a\"\naction = \"x\"\n\n[[test]]\nid = \"b\"\naction = \"y\"\ntimeout = 3\n",
			[]string{`t.toml:5: test "b": unknown key "timeout"`}},
		{"tests key in toml", "t.toml", "[[tests]]\nid = \"a\"\naction = \"x\"\n",
			[]string{`t.toml: unknown key "tests"`, `t.toml: has no tests`}},
		{"duplicate id", "t.json", `{"tests": [
  {"id": "a", "action": "x"},
  {"id": "b", "action": "y"},
  {"id": "a", "action": "z"}
]}`, []string{`t.json:4: test "a": duplicate id (first used by test #1, line 2)`}},
		{"bad regex", "t.json", `{"tests": [{"id": "a", "action": "x", "expect": [{"regex": "a(b"}]}]}`,
			[]string{`t.json:1: test "a": expect[0]: regex "a(b" does not compile: missing closing ): ` + "`a(b`"}},
		{"bad save regex and no group", "t.toml", "[[test]]\nid = \"a\"\naction = \"x\"\nsave = { t = \"[\", u = \"\\\\w+\" }\n",
			[]string{`t.toml:1: test "a": save.t: regex "[" does not compile: missing closing ]: ` + "`[`",
				`t.toml:1: test "a": save.u: regex "\\w+" has no group`}},
		{"undefined var", "t.json", `{"tests": [
  {"id": "a", "action": "use ${token}"}
]}`, []string{`t.json:2: test "a": uses ${token}, which no earlier test saves`}},
		{"var saved later", "t.json", `{"tests": [
  {"id": "a", "action": "x", "expect": [{"contains": "${token}"}]},
  {"id": "b", "action": "y", "save": {"token": "(\\w+)"}}
]}`, []string{`t.json:2: test "a": uses ${token}, which no earlier test saves`}},
		{"var saved by itself", "t.json", `{"tests": [{"id": "a", "action": "${t}", "save": {"t": "(x)"}}]}`,
			[]string{`t.json:1: test "a": uses ${t}, which no earlier test saves`}},
		{"missing id and action", "t.json", `{"tests": [{"description": "d"}, {"id": "", "action": " "}]}`,
			[]string{`t.json:1: test #1: missing id`, `t.json:1: test #1: missing action`,
				`t.json:1: test #2: id is empty`, `t.json:1: test #2: action is empty`}},
		{"wrong types", "t.json", `{"tests": [{"id": 7, "action": ["x"], "tags": "smoke", "expect": {"contains": "x"}, "save": ["x"]}]}`,
			[]string{`t.json:1: test #1: id must be a string, not a number`, `t.json:1: test #1: action must be a string, not a list`,
				`t.json:1: test #1: expect must be a list, not an object`, `t.json:1: test #1: save must be a map of variable to regex, not a list`,
				`t.json:1: test #1: tags must be a list of strings, not a string`}},
		// The libraries take a string for a map (TOML: an empty one) and a null in a list of strings (JSON: ""): both
		// once let a mistake through; a null for the whole value is as absent.
		{"save a string in toml", "t.toml", "[[test]]\nid = \"a\"\naction = \"x\"\nsave = \"token: (\\\\w+)\"\n",
			[]string{`t.toml:1: test "a": save must be a map of variable to regex, not a string`}},
		{"a null tag", "t.json", `{"tests": [{"id": "a", "action": "x", "tags": ["smoke", null], "save": null}]}`,
			[]string{`t.json:1: test "a": tags must be a list of strings, not a list`}},
		{"bad expectations", "t.json", `{"tests": [{"id": "a", "action": "x", "expect": [{"equals": "x"}, {"contains": "x", "regex": "y"}, {"contains": 3}]}]}`,
			[]string{`t.json:1: test "a": expect[0]: unknown expectation "equals"`,
				`t.json:1: test "a": expect[1] must have exactly one of contains, not_contains or regex`,
				`t.json:1: test "a": expect[2]: contains must be a string, not a number`}},
		{"bad var name", "t.json", `{"tests": [{"id": "a", "action": "x", "save": {"1x": "(x)"}}]}`,
			[]string{`t.json:1: test "a": save: "1x" is not a variable name`}},
		{"not json", "t.json", "{\n  \"tests\": [,]\n}", []string{`t.json:2: not valid JSON: invalid character ',' looking for beginning of value`}},
		{"not toml", "t.toml", "[[test]]\nid = \n", []string{`t.toml:2: expected value but found '\n' instead`}},
		{"header left open", "t.toml", "[[test]\nid = \"a\"\n", []string{`t.toml:1: expected end of table array name delimiter ']', but got '\n' instead`}},
		{"not an object", "t.json", `[1]`, []string{`t.json:1: must be a JSON object, not a list`}},
		{"no tests", "t.json", `{"tests": []}`, []string{`t.json: has no tests`}},
		{"test not an object", "t.json", `{"tests": ["x"]}`, []string{`t.json:1: test #1: must be an object, not a string`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.text), "/p/"+tc.file, "/p")
			var ps config.Problems
			if !errors.As(err, &ps) {
				t.Fatalf("err = %v, want Problems", err)
			}
			var got []string
			for _, p := range ps {
				got = append(got, p.Error())
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestSelectTests(t *testing.T) {
	s := &Suite{File: "t.json", Tests: []Test{
		{ID: "login", Category: "auth", Action: "x", Save: []Save{{"token", "(x)"}}, Tags: []string{"smoke"}},
		{ID: "me", Category: "api", Action: "${token}", Tags: []string{"smoke"}},
		{ID: "list", Category: "api", Action: "y", Tags: []string{"slow"}},
	}}
	ids := func(ts []Test) string {
		var out []string
		for _, t := range ts {
			out = append(out, t.ID)
		}
		return strings.Join(out, ",")
	}
	for _, tc := range []struct {
		f    Filters
		want string
		err  string
	}{
		{Filters{}, "login,me,list", ""},
		{Filters{Tags: []string{"smoke"}}, "login,me", ""},
		{Filters{Categories: []string{"auth", "api"}, Tags: []string{"slow", "smoke"}}, "login,me,list", ""},
		{Filters{Categories: []string{"api"}, Tags: []string{"slow"}}, "list", ""},
		{Filters{Categories: []string{"api"}}, "", `t.json: the filters (category api) break a variable chain`},
		{Filters{Categories: []string{"nope"}}, "", `no test of t.json matches the filters (category nope)`},
	} {
		got, err := selectTests(s, tc.f)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%v: err = %v, want %s", tc.f, err, tc.err)
			}
			continue
		}
		if err != nil || ids(got) != tc.want {
			t.Errorf("%v: got %s, %v; want %s", tc.f, ids(got), err, tc.want)
		}
	}
}

// The example project's suite loads, and chains its variables.
func TestExampleSuite(t *testing.T) {
	s, err := Load("../../"+DefaultJSONFile, "../..")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Tests) < 3 || s.File != DefaultJSONFile {
		t.Fatalf("suite %s has %d tests", s.File, len(s.Tests))
	}
	saved, used := 0, 0
	for _, test := range s.Tests {
		saved += len(test.Save)
		used += len(test.refs())
	}
	if saved == 0 || used == 0 {
		t.Errorf("the example saves %d and uses %d variables; it should show capture", saved, used)
	}
}
