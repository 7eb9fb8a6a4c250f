package config

import "testing"

func TestExpects(t *testing.T) {
	for _, tc := range []struct {
		v    Validator
		want string
	}{
		{Validator{ValidatorKeys: ValidatorKeys{Run: "go test ./..."}}, ""},
		{Validator{ValidatorKeys: ValidatorKeys{File: "output/joke.txt"}}, "output/joke.txt must exist"},
		{Validator{ValidatorKeys: ValidatorKeys{File: "CHANGELOG.md", Contains: "## Unreleased", NotContains: "TODO", Regex: `^# `}},
			`CHANGELOG.md must exist, contain "## Unreleased", not contain "TODO", match ^# `},
		{Validator{ValidatorKeys: ValidatorKeys{Diff: Diff{Changed: []string{"CHANGELOG.md", "docs/x.md"}}}}, "CHANGELOG.md, docs/x.md must change (since this prompt was read)"},
		{Validator{ValidatorKeys: ValidatorKeys{Diff: Diff{AddedLacks: `t\.Skip\(`, In: []string{"**/*_test.go"}}}}, `no line added in **/*_test.go may match t\.Skip\( (since this prompt was read)`},
		{Validator{ValidatorKeys: ValidatorKeys{Diff: Diff{Cheats: true}}}, "no cheat added in the sources, test configs, scripts and CI: tests deleted or skipped, assertions removed, tests excluded, suppressions, --no-verify, secrets (since this prompt was read)"},
		{Validator{ValidatorKeys: ValidatorKeys{Diff: Diff{Cheats: true, In: []string{"src/"}}}}, "no cheat added in src/: tests deleted or skipped, assertions removed, tests excluded, suppressions, --no-verify, secrets (since this prompt was read)"},
		{Validator{ValidatorKeys: ValidatorKeys{Diff: Diff{AddedMatches: `^func Test`, In: []string{"**/*_test.go", "tests/"}}}}, `a line added in **/*_test.go, tests/ must match ^func Test (since this prompt was read)`},
	} {
		if got := tc.v.Expects(); got != tc.want {
			t.Errorf("%+v: Expects() = %q, want %q", tc.v, got, tc.want)
		}
	}
}
