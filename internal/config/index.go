package config

import (
	"cmp"
)

// Names returns every name of the prompt key.
func (c *Config) Names(key string) []Name { return Names(c.Settings.PromptsDir, key) }

// Files returns the root-relative paths whose read arms the prompt key.
func (c *Config) Files(key string) []string {
	return c.names(key, func(n Name) string { return n.File })
}

// Commands returns the slash commands, without "/", that arm the prompt key.
func (c *Config) Commands(key string) []string {
	return c.names(key, func(n Name) string { return n.Command })
}

func (c *Config) names(key string, part func(Name) string) []string {
	var out []string
	for _, n := range c.Names(key) {
		if s := part(n); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// MatchPath returns the mappings armed by a read of rel, a slash path
// relative to the project root, in file order.
func (c *Config) MatchPath(rel string) ([]*Mapping, error) {
	if !mayName(c.Settings.PromptsDir, rel) {
		return nil, nil // most reads: the mappings need not be read
	}
	return c.match('p', rel)
}

// MatchCommand returns the mappings armed by the slash command /name.
func (c *Config) MatchCommand(name string) ([]*Mapping, error) { return c.match('c', name) }

// match returns the mappings a path ('p') or command ('c') key arms, from
// the cache's records or from the index, built on first use.
func (c *Config) match(kind byte, key string) ([]*Mapping, error) {
	var maps []*Mapping
	if ok, err := c.fromCache(func(r *records) (err error) { maps, err = r.match(kind, key); return err }); ok || err != nil {
		return maps, err
	}
	if c.index == nil {
		byPath, byCommand := c.tables()
		c.index = map[byte]map[string][]int{'p': byPath, 'c': byCommand}
	}
	return c.pick(c.index[kind][key]), nil
}

// Mapping returns the mapping of prompt key, or nil.
func (c *Config) Mapping(key string) *Mapping {
	for i := range c.Mappings {
		if c.Mappings[i].Prompt == key {
			return &c.Mappings[i]
		}
	}
	return nil
}

func (c *Config) pick(idx []int) []*Mapping {
	if len(idx) == 0 {
		return nil
	}
	out := make([]*Mapping, len(idx))
	for i, j := range idx {
		out[i] = &c.Mappings[j]
	}
	return out
}

// tables maps each file and command of every mapping's Names to the
// mappings they arm, in file order.
func (c *Config) tables() (byPath, byCommand map[string][]int) {
	byPath = make(map[string][]int, 4*len(c.Mappings))
	byCommand = make(map[string][]int, 2*len(c.Mappings))
	for i, m := range c.Mappings {
		for _, n := range c.Names(m.Prompt) {
			if n.File != "" {
				byPath[n.File] = appendOnce(byPath[n.File], i)
			} else {
				byCommand[n.Command] = appendOnce(byCommand[n.Command], i)
			}
		}
	}
	return byPath, byCommand
}

func appendOnce(s []int, v int) []int {
	if len(s) > 0 && s[len(s)-1] == v {
		return s
	}
	return append(s, v)
}

func cleanJoin(dir, name string) string {
	dir = trimSlashes(dir)
	if dir == "" || dir == "." {
		return name
	}
	return dir + "/" + name
}

func trimSlashes(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	for len(s) > 1 && s[:2] == "./" {
		s = s[2:]
	}
	return s
}

// Runs returns the run validators, in file order, with their Name and Run
// (the guard asks at every write it judges).
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
