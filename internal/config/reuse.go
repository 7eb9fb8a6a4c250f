package config

import (
	"fmt"

	"github.com/stopgate/stopgate/internal/pattern"
)

// Policies for [settings] reuse: whether a validator that passed earlier
// in the session is taken as passed while nothing it depends on changed
// (package stop, reuse.go).
const (
	ReuseAuto = ""    // no reuse key: reuse where the state dir is walled off from the agent
	ReuseOn   = "on"  // reuse = true: reuse wherever, the user knowing the record could be forged
	ReuseOff  = "off" // reuse = false: run every validator at every stop
)

func reuseSetting(v *bool) string {
	if v == nil {
		return ReuseAuto
	}
	return onOff(*v, ReuseOn, ReuseOff)
}

// onOff is the setting a TOML boolean spells.
func onOff(v bool, on, off string) string {
	if v {
		return on
	}
	return off
}

// inputs checks a validator's inputs key: each pattern a valid glob, and
// at least one. A file validator's file is its input; it takes none.
func (p *parser) inputs(key string, rv rawValidator) []string {
	if rv.Inputs == nil {
		return nil
	}
	in := *rv.Inputs
	switch {
	case rv.File != "":
		p.add(key+".inputs", "applies to run validators only", "a file validator is always checked: it only reads its file")
	case len(in) == 0:
		p.add(key+".inputs", "lists no pattern", `remove it to take the whole working tree, or list the files the check reads: inputs = ["**/*.go", "go.mod"]`)
	default:
		if _, err := pattern.Compile(in); err != nil {
			p.add(key+".inputs", err.Error(), `gitignore-style patterns: "*.go" at any depth, "/go.mod" at the root, "src/**", "!*_test.go" to leave out`)
		}
	}
	return in
}

// Patterns returns the compiled patterns of v's inputs; nil for none
// (the whole working tree). A config that loaded has valid patterns. They
// are compiled once: a stop asks for them what to fingerprint, then for
// each validator's key.
func (v *Validator) Patterns() (*pattern.Set, error) {
	if v.Inputs == nil || v.patterns != nil {
		return v.patterns, nil
	}
	ps, err := pattern.Compile(v.Inputs)
	if err != nil {
		return nil, fmt.Errorf("validators.%s.inputs: %w", v.Name, err)
	}
	v.patterns = ps
	return ps, nil
}
