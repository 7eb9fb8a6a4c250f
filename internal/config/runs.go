package config

// Runs returns the validators that run a program, in file order, with
// their Name and Run: what the PreToolUse guard protects, which it asks on
// every Write, Edit and Bash call it judges.
func (c *Config) Runs() ([]*Validator, error) {
	var out []*Validator
	if ok, err := c.fromCache(); err != nil {
		return nil, err
	} else if ok {
		var runs [][2]string
		if !c.record('r', "", &runs) {
			return nil, errCache
		}
		for _, r := range runs {
			out = append(out, &Validator{Name: r[0], Run: r[1]})
		}
		return out, nil
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
	if ok, err := c.fromCache(); err != nil {
		return nil, err
	} else if ok {
		v := new(Validator)
		if !c.record('v', name, v) {
			return nil, nil
		}
		return v, nil
	}
	return c.Validators[name], nil
}
