package validator

import (
	"strings"
	"testing"
)

// TestParseAnswer: the one structure a judge must answer in, verified
// against the evidence. Every way out of it is a reason (unavailable),
// never a verdict.
func TestParseAnswer(t *testing.T) {
	bodies := []string{"# Changelog\n- Fixed stuff\n", "ok 3 tests"}
	for _, c := range []struct {
		name, text, why string // why: "" for an answer that stands
		pass            bool
	}{
		{"pass", `{"verdict":"pass","reasons":["fine"]}`, "", true},
		{"fenced fail", "```json\n{\"verdict\":\"fail\",\"reasons\":[\"vague\"],\"quotes\":[\"- Fixed stuff\"]}\n```", "", false},
		{"quote across lines", `{"verdict":"fail","reasons":["vague"],"quotes":["# Changelog\n- Fixed"]}`, "", false},
		{"prose", `It passes.`, "not the JSON object", false},
		{"text after", `{"verdict":"pass","reasons":["fine"]} and more`, "not the JSON object", false},
		{"unknown field", `{"verdict":"pass","reasons":["fine"],"score":9}`, "not the JSON object", false},
		{"other verdict", `{"verdict":"maybe","reasons":["unsure"]}`, `verdict "maybe"`, false},
		{"no reason", `{"verdict":"pass"}`, "no reason", false},
		{"fail unquoted", `{"verdict":"fail","reasons":["vague"]}`, "without quoting", false},
		{"invented quote", `{"verdict":"fail","reasons":["vague"],"quotes":["Fixed everything"]}`, `quotes "Fixed everything"`, false},
		{"blank quote", `{"verdict":"fail","reasons":["vague"],"quotes":[" "]}`, "does not hold", false},
		{"pass with invented quote", `{"verdict":"pass","reasons":["fine"],"quotes":["all 9 tests"]}`, "does not hold", false},
	} {
		a, why := parseAnswer(c.text, bodies)
		if c.why == "" && why != "" || !strings.Contains(why, c.why) {
			t.Errorf("%s: why %q, want %q", c.name, why, c.why)
		}
		if c.why == "" && (a.Verdict == "pass") != c.pass {
			t.Errorf("%s: verdict %q", c.name, a.Verdict)
		}
	}
}
