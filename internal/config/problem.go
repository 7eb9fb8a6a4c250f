package config

import (
	"fmt"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
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
		b.WriteString(cli.Visible(p.Key, true))
		b.WriteString(": ")
	}
	b.WriteString(cli.Visible(p.Msg, true))
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
