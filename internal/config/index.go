package config

// Index finds the mappings a read path or a slash command arms in constant
// time per event, however many mappings there are.
type Index struct {
	byPath    map[string][]int // slash path relative to the root
	byCommand map[string][]int
}

// Paths returns the root-relative paths whose read arms the prompt key:
// <prompts_dir>/K.md, .claude/commands/D.md and -/D.md.
func (c *Config) Paths(key string) []string {
	d := Command(key)
	return []string{cleanJoin(c.Settings.PromptsDir, key+".md"), ".claude/commands/" + d + ".md", "-/" + d + ".md"}
}

// Index returns the config's index, building it on first use.
func (c *Config) Index() *Index {
	if c.index != nil {
		return c.index
	}
	ix := &Index{byPath: make(map[string][]int, 3*len(c.Mappings)), byCommand: make(map[string][]int, len(c.Mappings))}
	for i, m := range c.Mappings {
		for _, p := range c.Paths(m.Prompt) {
			ix.byPath[p] = appendOnce(ix.byPath[p], i)
		}
		d := Command(m.Prompt)
		ix.byCommand[d] = appendOnce(ix.byCommand[d], i)
	}
	c.index = ix
	return ix
}

// MatchPath returns the mappings armed by a read of rel, a slash path
// relative to the project root.
func (c *Config) MatchPath(rel string) []*Mapping { return c.pick(c.Index().byPath[rel]) }

// MatchCommand returns the mappings armed by the slash command /name.
func (c *Config) MatchCommand(name string) []*Mapping { return c.pick(c.Index().byCommand[name]) }

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
