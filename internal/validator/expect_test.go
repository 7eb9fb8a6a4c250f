package validator

import (
	"strings"
	"testing"
)

func TestExpectation(t *testing.T) {
	tests := []struct {
		kind    Kind
		pattern string
		text    string
		ok      bool
		why     string
	}{
		{Contains, "bug", "light attracts bugs", true, ""},
		{Contains, "bug", "no insects", false, `does not contain "bug"`},
		{NotContains, "TODO", "done", true, ""},
		{NotContains, "TODO", "TODO: punchline", false, `contains "TODO", which it must not`},
		{Regex, `^.{1,10}$`, "short\n", true, ""}, // trailing newline trimmed
		{Regex, `^.{1,10}$`, "short\r\n", true, ""},
		{Regex, `^.{1,10}$`, "two\nlines", false, `does not match regex ^.{1,10}$`},
		{Regex, `^.{1,10}$`, "", false, `does not match regex ^.{1,10}$`},
		{Regex, `(?i)^id: (\d+)`, "ID: 42", true, ""},
	}
	for _, tt := range tests {
		x, err := NewExpectation(tt.kind, tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		whys := CheckAll(tt.text, []Expectation{x})
		ok, why := len(whys) == 0, strings.Join(whys, "; ")
		if ok != tt.ok || why != tt.why {
			t.Errorf("%s %q on %q = %v %q, want %v %q", tt.kind, tt.pattern, tt.text, ok, why, tt.ok, tt.why)
		}
	}
}

func TestNewExpectationRejects(t *testing.T) {
	if _, err := NewExpectation(Regex, "("); err == nil {
		t.Error("bad regex accepted")
	}
	if _, err := NewExpectation("equals", "x"); err == nil {
		t.Error("unknown kind accepted")
	}
}
