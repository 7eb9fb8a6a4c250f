package hook

import "testing"

func TestVisible(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"plain text\n\tindented", "plain text\n\tindented"},
		{"red \x1b[31mERROR\x1b[0m", `red \x1b[31mERROR\x1b[0m`},
		{"title \x1b]0;pwned\x07", `title \x1b]0;pwned\x07`},
		{"cr\roverwrite", `cr\x0doverwrite`},
		{"nul\x00 del\x7f", `nul\x00 del\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bad \xff utf8", `bad \xff utf8`},
		{"ünïcödé ✔ ✘", "ünïcödé ✔ ✘"},
	} {
		if got := Visible(tt.in); got != tt.want {
			t.Errorf("Visible(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
