package config

import (
	"crypto/sha256"
	"encoding/binary"
	"io"
	"os"
	"strings"
	"time"
)

// Compiled is a config laid out for answering one hook event: its settings
// are decoded up front, its mappings and validators read only when a
// lookup reaches them. Detect loads one on every event that might match,
// from the index cache (see LoadCompiled), so that what grows with the
// number of mappings is one read of the config's text, never a parse.
//
// Every answer is the one Parse's config would give: a lookup that finds
// the encoding malformed parses the config file instead. Close releases
// the index file.
type Compiled struct {
	File     string // path of the config file
	Root     string // project root that relative paths resolve against
	Settings Settings

	head   *head
	src    io.ReaderAt
	closer io.Closer
	tables []byte // read and checked on the first lookup that needs them

	key  [keySize]byte // SHA-256 of the config text
	text []byte        // the config text, when it was read whole
	full *Config       // the parsed text, once needed
}

func newCompiled(h *head, f *os.File, file, root string) *Compiled {
	return &Compiled{File: file, Root: root, Settings: h.settings, head: h, src: f, closer: f, key: h.key}
}

// Compiled returns the parsed config as a Compiled, so that the commands
// that hold a Config (gate explain, gate run) judge a read by the very
// code detect runs.
func (c *Config) Compiled() *Compiled {
	return &Compiled{File: c.File, Root: c.Root, Settings: c.Settings, full: c}
}

// Close releases the index file.
func (c *Compiled) Close() error {
	if c.closer == nil {
		return nil
	}
	err := c.closer.Close()
	c.closer = nil
	return err
}

// StateDir returns the absolute state dir.
func (c *Compiled) StateDir() string { return stateDir(c.Root, c.Settings.StateDir) }

// MatchPath returns the mappings armed by a read of rel, a slash path
// relative to the project root, in file order: those with rel among their
// Names.
func (c *Compiled) MatchPath(rel string) ([]*Mapping, error) {
	if c.full != nil {
		return c.full.MatchPath(rel), nil
	}
	if !mayName(c.Settings.PromptsDir, rel) {
		return nil, nil // most reads: no table need be read
	}
	return c.match(c.head.paths, rel, (*Config).MatchPath)
}

// MatchCommand returns the mappings armed by the slash command /name.
func (c *Compiled) MatchCommand(name string) ([]*Mapping, error) {
	if c.full != nil {
		return c.full.MatchCommand(name), nil
	}
	return c.match(c.head.commands, name, (*Config).MatchCommand)
}

// Validator returns the validator called name, or nil when there is none.
func (c *Compiled) Validator(name string) (*Validator, error) {
	if c.full == nil {
		v, err := c.validator(name)
		if err == nil {
			return v, nil
		}
		if err := c.fallBack(); err != nil {
			return nil, err
		}
	}
	return c.full.Validators[name], nil
}

// Config returns the whole config, parsed.
func (c *Compiled) Config() (*Config, error) {
	if c.full == nil {
		if err := c.fallBack(); err != nil {
			return nil, err
		}
	}
	return c.full, nil
}

func (c *Compiled) match(t table, key string, parsed func(*Config, string) []*Mapping) ([]*Mapping, error) {
	if c.full == nil {
		maps, err := c.lookup(t, key)
		if err == nil {
			return maps, nil
		}
		if err := c.fallBack(); err != nil {
			return nil, err
		}
	}
	return parsed(c.full, key), nil
}

// fallBack parses the config, for an answer the encoding cannot give. A
// load that compared the text as it streamed by holds none: the file is
// read again, and the key follows what is parsed.
func (c *Compiled) fallBack() error {
	if c.text == nil {
		text, err := os.ReadFile(c.File)
		if err != nil {
			return err
		}
		c.text, c.key = text, sha256.Sum256(text)
	}
	cfg, err := Parse(c.text, c.File, c.Root)
	if err != nil {
		return err
	}
	c.full, c.Settings = cfg, cfg.Settings
	return nil
}

// record reads and checks the body of entry i of table t.
func (c *Compiled) record(t table, i int) ([]byte, error) {
	if c.tables == nil {
		b := make([]byte, c.head.tablesEnd-c.head.headEnd)
		if _, err := c.src.ReadAt(b, int64(c.head.headEnd)); err != nil || checksum(b) != c.head.tablesCRC {
			return nil, errCorrupt
		}
		c.tables = b
	}
	off := int64(binary.LittleEndian.Uint32(c.tables[t.at+4*i:]))
	if off < int64(c.head.tablesEnd) {
		return nil, errCorrupt
	}
	return readRecord(c.src, off)
}

// search finds the record of table t whose leading string is key, and
// returns the rest of its body.
func (c *Compiled) search(t table, key string) (rest []byte, found bool, err error) {
	lo, hi := 0, t.n
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		body, err := c.record(t, mid)
		if err != nil {
			return nil, false, err
		}
		r := reader{b: body}
		k := r.bytes()
		if r.err != nil {
			return nil, false, r.err
		}
		switch cmp := strings.Compare(string(k), key); {
		case cmp == 0:
			return r.b, true, nil
		case cmp < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return nil, false, nil
}

func (c *Compiled) lookup(t table, key string) ([]*Mapping, error) {
	rest, found, err := c.search(t, key)
	if err != nil || !found {
		return nil, err
	}
	r := reader{b: rest}
	n := r.index(c.head.mappings.n + 1)
	if r.err != nil || n == 0 {
		return nil, errCorrupt
	}
	maps := make([]*Mapping, n)
	for j := range maps {
		i := r.index(c.head.mappings.n)
		if r.err != nil {
			return nil, r.err
		}
		if maps[j], err = c.mapping(i); err != nil {
			return nil, err
		}
	}
	return maps, nil
}

func (c *Compiled) mapping(i int) (*Mapping, error) {
	body, err := c.record(c.head.mappings, i)
	if err != nil {
		return nil, err
	}
	r := reader{b: body}
	self := r.uvarint()
	m := &Mapping{Prompt: r.str(), Line: int(r.uvarint()), Validators: r.strs()}
	if r.err != nil || self != uint64(i) || m.Prompt == "" || len(m.Validators) == 0 {
		return nil, errCorrupt
	}
	return m, nil
}

func (c *Compiled) validator(name string) (*Validator, error) {
	rest, found, err := c.search(c.head.validators, name)
	if err != nil || !found {
		return nil, err
	}
	v := &Validator{Name: name}
	r := reader{b: rest}
	r.validatorBody(v)
	if r.err != nil || (v.File == "") == (v.Run == "") {
		return nil, errCorrupt
	}
	return v, nil
}

func durationOf(v int64) time.Duration { return time.Duration(v) }
