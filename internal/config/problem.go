package config

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Problem is one mistake in a config file, located by line and key.
type Problem struct {
	File    string // as shown to a person: relative to the project root when inside it
	Line    int    // 0 when unknown
	Key     string // dotted TOML key, e.g. validators.joke-file.regex
	Msg     string
	Hint    string // how to fix it, or ""
	Warning bool   // a warning does not stop the config from loading
}

func (p *Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Key != "" {
		b.WriteString(OneLine(p.Key))
		b.WriteString(": ")
	}
	b.WriteString(OneLine(p.Msg))
	return b.String()
}

// OneLine escapes the control characters of s, Go-style ("\n", "\x00"),
// so that a message quoting the text it complains about (the TOML decoder's
// do) stays one line and still shows the culprit.
func OneLine(s string) string {
	if !strings.ContainsFunc(s, unicode.IsControl) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsControl(r) {
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Problems is every mistake found in one load, in file order. As an error
// it unwraps to each *Problem.
type Problems []*Problem

func (ps Problems) Error() string {
	msgs := make([]string, len(ps))
	for i, p := range ps {
		msgs[i] = p.Error()
	}
	return strings.Join(msgs, "; ")
}

// Unwrap gives each problem to errors.Is and errors.As.
func (ps Problems) Unwrap() []error {
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = p
	}
	return errs
}

// Lines is each problem on its own line, each hint indented under it.
func (ps Problems) Lines() []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.Error())
		if p.Hint != "" {
			out = append(out, "  hint: "+p.Hint)
		}
	}
	return out
}

// Errors returns the problems that are not warnings.
func (ps Problems) Errors() Problems {
	var out Problems
	for _, p := range ps {
		if !p.Warning {
			out = append(out, p)
		}
	}
	return out
}
