// Package validator is the one engine that runs stopgate's checks, for the
// gate's validators and the test runner's expectations alike. A check's
// failure is a Result, never an error, one per Spec in the order given.
package validator

import (
	"fmt"
	"regexp"
	"strings"
)

// Kind is an expectation kind, as written in mappings.toml and tests files.
type Kind string

const (
	Contains    Kind = "contains"
	NotContains Kind = "not_contains"
	Regex       Kind = "regex"
)

// Expectation is one condition on a text, made by NewExpectation.
type Expectation struct {
	Kind    Kind
	Pattern string
	re      *regexp.Regexp
}

// NewExpectation checks and compiles an expectation.
func NewExpectation(kind Kind, pattern string) (Expectation, error) {
	x := Expectation{Kind: kind, Pattern: pattern}
	switch kind {
	case Contains, NotContains:
	case Regex:
		re, err := regexp.Compile(pattern)
		if err != nil {
			return x, fmt.Errorf("regex %q does not compile: %w", pattern, err)
		}
		x.re = re
	default:
		return x, fmt.Errorf("unknown expectation kind %q (want contains, not_contains or regex)", kind)
	}
	return x, nil
}

// MustExpectation is NewExpectation for patterns known to be valid.
func MustExpectation(kind Kind, pattern string) Expectation {
	x, err := NewExpectation(kind, pattern)
	if err != nil {
		panic(err)
	}
	return x
}

// Check reports whether text meets x, and if not, why, in one line.
// Trailing line breaks are trimmed first: Go's $ does not match before one.
func (x Expectation) Check(text string) (ok bool, why string) {
	text = strings.TrimRight(text, "\r\n")
	switch x.Kind {
	case Contains:
		ok, why = strings.Contains(text, x.Pattern), fmt.Sprintf("does not contain %q", x.Pattern)
	case NotContains:
		ok, why = !strings.Contains(text, x.Pattern), fmt.Sprintf("contains %q, which it must not", x.Pattern)
	case Regex: // compiled by NewExpectation, the only maker of a Regex
		ok, why = x.re.MatchString(text), "does not match regex "+x.Pattern
	default:
		return false, fmt.Sprintf("unknown expectation kind %q", x.Kind)
	}
	if ok {
		return true, ""
	}
	return false, why
}

// CheckAll returns why text fails each expectation it does not meet.
func CheckAll(text string, xs []Expectation) []string {
	var whys []string
	for _, x := range xs {
		if ok, why := x.Check(text); !ok {
			whys = append(whys, why)
		}
	}
	return whys
}
