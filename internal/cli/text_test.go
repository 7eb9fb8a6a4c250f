package cli

import (
	"syscall"
	"testing"
	"time"
)

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
		if got := Visible(tt.in, false); got != tt.want {
			t.Errorf("Visible(%q, false) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestClip(t *testing.T) {
	for _, tt := range []struct {
		in   string
		n    int
		more string
		want string
	}{
		{"short", 10, "…", "short"},
		{"exactly", 7, "…", "exactly"},
		{"a longer line", 8, "…", "a longer…"},
		{"héllo", 2, "", "h"}, // é is two bytes: cut before it, not through it
		{"answer", 3, "\n… (clipped)", "ans\n… (clipped)"},
	} {
		if got := Clip(tt.in, tt.n, tt.more); got != tt.want {
			t.Errorf("Clip(%q, %d, %q) = %q, want %q", tt.in, tt.n, tt.more, got, tt.want)
		}
	}
}

func TestOneLine(t *testing.T) {
	if got := OneLine("  exec: \"x\":\n\tnot found  \r\n"); got != `exec: "x": not found` {
		t.Errorf("OneLine = %q", got)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"bin/gate":       "bin/gate",
		"my dir/gate":    "'my dir/gate'",
		"it's":           `'it'\''s'`,
		"":               "''",
		`{"continue":1}`: `'{"continue":1}'`,
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSignalName(t *testing.T) {
	if got := SignalName(syscall.SIGTERM); got != "SIGTERM" {
		t.Errorf("SignalName(SIGTERM) = %q", got)
	}
	if got := SignalName(syscall.SIGUSR1); got != syscall.SIGUSR1.String() {
		t.Errorf("SignalName(SIGUSR1) = %q, want its description", got)
	}
}

func TestDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		42 * time.Microsecond: "42µs", 3 * time.Millisecond: "3ms", 999 * time.Millisecond: "999ms",
		1500 * time.Millisecond: "1.5s", 90 * time.Second: "1m30s",
	} {
		if got := Duration(d); got != want {
			t.Errorf("Duration(%v) = %q, want %q", d, got, want)
		}
	}
}
