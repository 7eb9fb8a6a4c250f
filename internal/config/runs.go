package config

// Runs returns the validators that run a program, in file order, with
// their Name and Run: what the PreToolUse guard protects, which it asks on
// every Write, Edit and Bash call it judges.
func (c *Config) Runs() ([]*Validator, error) {
	if c.rest != nil {
		if vs, ok := c.cachedRuns(); ok {
			return vs, nil
		}
	}
	if _, err := c.Full(); err != nil {
		return nil, err
	}
	var out []*Validator
	for _, name := range c.Order {
		if v := c.Validators[name]; v.Run != "" {
			out = append(out, v)
		}
	}
	return out, nil
}

// Validator returns the validator called name, or nil when there is none.
func (c *Config) Validator(name string) (*Validator, error) {
	if _, err := c.Full(); err != nil {
		return nil, err
	}
	return c.Validators[name], nil
}
