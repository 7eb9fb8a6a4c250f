package config

import "testing"

func TestExpects(t *testing.T) {
	for _, tc := range []struct {
		v    Validator
		want string
	}{
		{Validator{Run: "go test ./..."}, ""},
		{Validator{File: "output/joke.txt"}, "output/joke.txt exists"},
		{Validator{File: "CHANGELOG.md", Contains: "## Unreleased", NotContains: "TODO", Regex: `^# `},
			`CHANGELOG.md exists, contains "## Unreleased", does not contain "TODO", matches "^# "`},
		{Validator{Diff: Diff{Changed: []string{"CHANGELOG.md", "docs/x.md"}}}, "CHANGELOG.md, docs/x.md changed"},
		{Validator{Diff: Diff{AddedLacks: `t\.Skip\(`, In: []string{"**/*_test.go"}}}, `no added line in **/*_test.go matches t\.Skip\(`},
		{Validator{Diff: Diff{AddedMatches: `^func Test`, In: []string{"**/*_test.go", "tests/"}}}, `an added line in **/*_test.go, tests/ matches ^func Test`},
	} {
		if got := tc.v.Expects(); got != tc.want {
			t.Errorf("%+v: Expects() = %q, want %q", tc.v, got, tc.want)
		}
	}
}
