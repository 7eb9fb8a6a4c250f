package stop

import (
	"testing"

	"github.com/stopgate/stopgate/internal/config"
)

func TestSelects(t *testing.T) {
	for _, tc := range []struct {
		pats, files []string
		want        bool
	}{
		{nil, nil, true}, // no when_changed: always runs
		{[]string{"*.go"}, []string{}, false},
		{[]string{"*.go"}, []string{"docs/a.md"}, false},
		{[]string{"*.go"}, []string{"docs/a.md", "cmd/x/main.go"}, true},
		{[]string{"/go.mod"}, []string{"sub/go.mod"}, false},
		{[]string{"/go.mod"}, []string{"go.mod"}, true},
		{[]string{"src/"}, []string{"src/a/b.js"}, true},
		{[]string{"*.go", "!*_test.go"}, []string{"a_test.go"}, false},
		{[]string{"[a-"}, []string{}, true}, // a pattern that does not compile runs the check
	} {
		if got := selects(tc.pats, tc.files); got != tc.want {
			t.Errorf("selects(%q, %q) = %v, want %v", tc.pats, tc.files, got, tc.want)
		}
	}
}

// A check shared by prompts is skipped only when each prompt skips it;
// the mapping's when_changed and the validator's both apply.
func TestSkipped(t *testing.T) {
	cfg := &config.Config{Mappings: []config.Mapping{
		{Prompt: "docs", WhenChanged: []string{"docs/"}},
		{Prompt: "any"},
	}}
	tests := &config.Validator{Name: "tests", ValidatorKeys: config.ValidatorKeys{WhenChanged: []string{"*.go"}}}
	lint := &config.Validator{Name: "lint"}
	for _, tc := range []struct {
		name    string
		v       *config.Validator
		prompts []string
		changed map[string][]string
		skip    bool
	}{
		{"validator's patterns, nothing matching", tests, []string{"any"}, map[string][]string{"any": {"README.md"}}, true},
		{"validator's patterns, matching", tests, []string{"any"}, map[string][]string{"any": {"a.go"}}, false},
		{"mapping's patterns, nothing matching", lint, []string{"docs"}, map[string][]string{"docs": {"a.go"}}, true},
		{"mapping's patterns, matching", lint, []string{"docs"}, map[string][]string{"docs": {"docs/x.md"}}, false},
		{"both apply", tests, []string{"docs"}, map[string][]string{"docs": {"docs/x.md"}}, true},
		{"one prompt runs it", tests, []string{"any", "docs"}, map[string][]string{"any": {"a.go"}, "docs": {}}, false},
		{"every prompt skips it", tests, []string{"any", "docs"}, map[string][]string{"any": {}, "docs": {"a.go"}}, true},
		{"no when_changed at all", lint, []string{"any"}, map[string][]string{"any": {}}, false},
	} {
		got := skipped(cfg, &Check{Validator: tc.v, Prompts: tc.prompts}, tc.changed)
		if (got != "") != tc.skip {
			t.Errorf("%s: skipped = %q, want skipped %v", tc.name, got, tc.skip)
		}
	}
}
