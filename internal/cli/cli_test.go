package cli

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

func TestRunExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		run    func(*Env) error
		code   int
		stderr string
	}{
		{"success", func(*Env) error { return nil }, 0, ""},
		{"error", func(*Env) error { return errors.New("no\nluck") }, 1, "x: no luck\n"},
		{"hinted", func(*Env) error { return WithHint(errors.New("bad"), "try this") }, 1, "x: bad\n\ttry this\n"},
		{"exit code", func(*Env) error { return &ExitError{Code: 2, Err: errors.New("usage")} }, 2, "x: usage\n"},
		{"silent exit", func(*Env) error { return Exit(1) }, 1, ""},
		// A panic is a non-blocking error, never Go's exit 2.
		{"panic", func(*Env) error { var list []int; return errors.New(strconv.Itoa(list[len(list)])) }, 1, "x: internal error (a bug in stopgate): runtime error: index out of range [0] with length 0\n"},
	} {
		var stderr bytes.Buffer
		code := Run("x", &Env{Stderr: &stderr}, tc.run, func(io.Writer) {})
		got := stderr.String()
		if tc.name == "panic" {
			if !strings.Contains(got, "goroutine ") {
				t.Errorf("%s: no stack on stderr: %q", tc.name, got)
			}
			got = got[strings.LastIndex(got, "x: "):]
		}
		if code != tc.code || got != tc.stderr {
			t.Errorf("%s: exit %d, stderr %q; want %d, %q", tc.name, code, got, tc.code, tc.stderr)
		}
	}
}
