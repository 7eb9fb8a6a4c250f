package testhook

import (
	"reflect"
	"strings"
	"testing"
)

func TestRefs(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"no vars", nil},
		{"${a}", []string{"a"}},
		{"x ${token} y ${user_id} ${token}", []string{"token", "user_id", "token"}},
		{"$token ${} ${1x} ${a-b} ${ spaced }", nil},
		{"${a${b}}", []string{"b"}},
		{"${unclosed", nil},
		{"price: $${amount}", []string{"amount"}},
		{"${_x9}", []string{"_x9"}},
	} {
		if got := refs(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("refs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSubstitute(t *testing.T) {
	vars := map[string]Var{
		"token": {Value: "abc123"},
		"re":    {Value: "a.b*(c)"},
		"empty": {Value: ""},
	}
	for _, tc := range []struct {
		in    string
		quote bool
		want  string
	}{
		{"plain", false, "plain"},
		{"Bearer ${token}", false, "Bearer abc123"},
		{"${token}${token}", false, "abc123abc123"},
		{"[${empty}]", false, "[]"},
		{"id ${re}", false, "id a.b*(c)"},
		{"^id ${re}$", true, `^id a\.b\*\(c\)$`},
		{"${token} ${nope} ${other} ${nope}", false, "abc123 ${nope} ${other} ${nope}"},
		{"$token ${1}", false, "$token ${1}"},
	} {
		if got := substitute(tc.in, vars, tc.quote); got != tc.want {
			t.Errorf("substitute(%q, quote=%v) = %q; want %q", tc.in, tc.quote, got, tc.want)
		}
	}
}

func TestCapture(t *testing.T) {
	vars := map[string]Var{"user": {Value: "a.b"}}
	for _, tc := range []struct {
		name   string
		answer string
		saves  []Save
		want   map[string]Var
		whys   string
	}{
		{"group 1", "token: xyz42\n", []Save{{Var: "token", Regex: `token: (\w+)`}}, map[string]Var{"token": {Value: "xyz42", Test: "t"}}, ""},
		{"first match", "id=1 id=2", []Save{{Var: "id", Regex: `id=(\d)`}}, map[string]Var{"id": {Value: "1", Test: "t"}}, ""},
		{"empty group counts", "id=", []Save{{Var: "id", Regex: `id=(\d*)`}}, map[string]Var{"id": {Value: "", Test: "t"}}, ""},
		{"no match fails", "nothing", []Save{{Var: "token", Regex: `token: (\w+)`}}, map[string]Var{}, `cannot save ${token}: no match for regex token: (\w+)`},
		{"var in save regex is literal", "a.b=7 axb=8", []Save{{Var: "n", Regex: `${user}=(\d)`}}, map[string]Var{"n": {Value: "7", Test: "t"}}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, whys := capture(tc.answer, tc.saves, vars, "t")
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("saved %v, want %v", got, tc.want)
			}
			if s := strings.Join(whys, "; "); s != tc.whys {
				t.Errorf("whys %q, want %q", s, tc.whys)
			}
		})
	}
}

func TestValidName(t *testing.T) {
	for in, want := range map[string]bool{"a": true, "_": true, "a1_B": true, "": false, "1a": false, "a-b": false, "a b": false, "é": false} {
		if got := validName(in); got != want {
			t.Errorf("validName(%q) = %v", in, got)
		}
	}
}
