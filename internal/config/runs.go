package config

import "cmp"

// Runs returns the validators that run a program, in file order, with
// their Name and Run: what the PreToolUse guard protects, which it asks on
// every Write, Edit and Bash call it judges.
func (c *Config) Runs() ([]*Validator, error) {
	var out []*Validator
	if ok, err := c.fromCache(func(r *records) error {
		var runs [][2]string
		if ok, err := r.get('r', "", &runs); !ok {
			return cmp.Or(err, errCache)
		}
		for _, run := range runs {
			out = append(out, &Validator{Name: run[0], Run: run[1]})
		}
		return nil
	}); ok || err != nil {
		return out, err
	}
	for _, name := range c.Order {
		if v := c.Validators[name]; v.Run != "" {
			out = append(out, v)
		}
	}
	return out, nil
}

// Validator returns the validator called name, or nil when there is none.
func (c *Config) Validator(name string) (*Validator, error) {
	var v *Validator
	if ok, err := c.fromCache(func(r *records) error {
		v = new(Validator)
		if ok, err := r.get('v', name, v); !ok {
			v = nil
			return err
		}
		return nil
	}); ok || err != nil {
		return v, err
	}
	return c.Validators[name], nil
}
