package config

import (
	"encoding/hex"
	"sort"
)

// Key identifies the config text the compiled form was made from (a
// SHA-256 of it, in hex): for caches of what is derived from the config.
func (c *Compiled) Key() string { return hex.EncodeToString(c.head.key[:]) }

// Runs returns the validators that run a program, in file order: what the
// PreToolUse guard protects. Like every lookup it reads the compiled
// records, and parses the config only when they are malformed.
func (c *Compiled) Runs() ([]*Validator, error) {
	if c.full == nil {
		if vs, err := c.runs(); err == nil {
			return vs, nil
		}
		if err := c.fallBack(); err != nil {
			return nil, err
		}
	}
	var out []*Validator
	for _, name := range c.full.Order {
		if v := c.full.Validators[name]; v.Run != "" {
			out = append(out, v)
		}
	}
	return out, nil
}

func (c *Compiled) runs() ([]*Validator, error) {
	type found struct {
		v     *Validator
		order int
	}
	var out []found
	for i := 0; i < c.head.validators.n; i++ {
		body, err := c.record(c.head.validators, i)
		if err != nil {
			return nil, err
		}
		r := reader{b: body}
		v := &Validator{Name: r.str()}
		order := r.validatorBody(v)
		if r.err != nil || v.Name == "" || (v.File == "") == (v.Run == "") {
			return nil, errCorrupt
		}
		if v.Run != "" {
			out = append(out, found{v, order})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].order < out[j].order })
	vs := make([]*Validator, len(out))
	for i, f := range out {
		vs[i] = f.v
	}
	return vs, nil
}
