package config

// Runs returns the validators that run a program, in file order, with
// their Name and Run: what the PreToolUse guard protects, which it asks on
// every Write, Edit and Bash call it judges. The compiled form keeps them
// in one record, so that costs one read however many validators there are;
// like every lookup it parses the config only when that record is
// malformed.
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
	body, err := c.record(c.head.runs, 0)
	if err != nil {
		return nil, err
	}
	r := reader{b: body}
	n := r.index(c.head.validators.n + 1)
	vs := make([]*Validator, 0, n)
	for i := 0; i < n && r.err == nil; i++ {
		v := &Validator{Name: r.str(), Run: r.str()}
		if v.Name == "" || v.Run == "" {
			return nil, errCorrupt
		}
		vs = append(vs, v)
	}
	if r.err != nil || len(r.b) != 0 {
		return nil, errCorrupt
	}
	return vs, nil
}
