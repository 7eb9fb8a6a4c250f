package config

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// The library parses the text into its tree of tables (toml.Decode into a
// map), and decoder reads that tree into the raw shapes, checking each
// value's TOML type itself. Decoding into the shapes, the library would say
// a type mismatch only in a sentence, with no position of its own and, in
// an array of tables, at the key's last occurrence; here each mismatch is
// located at its own, indexed key, and said in TOML's words.

// node is a table of the tree and its key, named two ways.
type node struct {
	key  toml.Key // as MetaData names it: array tables unindexed
	path string   // as positions locates it: "mapping[1].prompt"
	m    map[string]any
}

func (n node) child(name string) node {
	path := name
	if n.path != "" {
		path = n.path + "." + name
	}
	return node{key: append(slices.Clip(n.key), name), path: path}
}

// decoder reads the tree into the raw shapes. The keys it does not read
// are those unknownKeys reports.
type decoder struct {
	p *parser
	// bad is the first mismatch in the file: a value of the wrong type is
	// the one Problem reported, as it is when the library decodes.
	bad *Problem
}

func (d *decoder) file(tree map[string]any) rawFile {
	top := node{m: tree}
	var raw rawFile
	if t, ok := d.table(top, "settings"); ok {
		d.settings(t, &raw.Settings)
	}
	raw.Mapping = d.mappings(top)
	raw.Validators = d.validators(top)
	d.telemetry(top, &raw.Telemetry)
	return raw
}

func (d *decoder) settings(t node, s *rawSettings) {
	if v, ok := d.str(t, "prompts_dir"); ok {
		s.PromptsDir = &v
	}
	if v, ok := d.str(t, "state_dir"); ok {
		s.StateDir = &v
	}
	if v, ok := d.str(t, "timeout"); ok {
		s.Timeout = &v
	}
	if v, ok := d.integer(t, "max_blocks"); ok {
		s.MaxBlocks = &v
	}
	if v, ok := d.integer(t, "output_lines"); ok {
		s.OutputLines = &v
	}
	if v, ok := d.boolean(t, "announce"); ok {
		s.Announce = &v
	}
	if v, ok := d.str(t, "on_failure"); ok {
		s.OnFailure = &v
	}
	if v, ok := d.str(t, "mode"); ok {
		s.Mode = &v
	}
	if v, ok := d.strs(t, "protect"); ok {
		s.Protect = &v
	}
	if v, ok := d.boolean(t, "confine"); ok {
		s.Confine = &v
	}
}

func (d *decoder) mappings(top node) []rawMapping {
	k, v, ok := field(top, "mapping")
	if !ok {
		return nil
	}
	n := top.child(k)
	elems, ok := Array(v)
	if !ok {
		d.mismatch(n, v, "an array of tables")
		return nil
	}
	out := make([]rawMapping, 0, len(elems))
	for i, e := range elems {
		t := node{key: n.key, path: mappingPath(i)}
		if t.m, ok = e.(map[string]any); !ok {
			d.mismatch(t, e, "a table")
			continue
		}
		var rm rawMapping
		rm.Prompt, _ = d.str(t, "prompt")
		rm.Validators, _ = d.strs(t, "validators")
		out = append(out, rm)
	}
	return out
}

func (d *decoder) validators(top node) map[string]rawValidator {
	vs, ok := d.table(top, "validators")
	if !ok {
		return nil
	}
	out := make(map[string]rawValidator, len(vs.m))
	for name, v := range vs.m {
		t := vs.child(name)
		if t.m, ok = v.(map[string]any); !ok {
			d.mismatch(t, v, "a table")
			continue
		}
		var rv rawValidator
		rv.File, _ = d.str(t, "file")
		rv.Run, _ = d.str(t, "run")
		rv.Contains, _ = d.str(t, "contains")
		rv.NotContains, _ = d.str(t, "not_contains")
		rv.Regex, _ = d.str(t, "regex")
		rv.Timeout, _ = d.str(t, "timeout")
		rv.Fix, _ = d.str(t, "fix")
		out[name] = rv
	}
	return out
}

// field returns the key of table t that the field name reads and its
// value, if there is one. Like the library, it reads a key spelt in other
// letter case when none is spelt right (unknownKeys reports it).
func field(t node, name string) (string, any, bool) {
	if v, ok := t.m[name]; ok {
		return name, v, true
	}
	k, ok := folded(t.m, name)
	return k, t.m[k], ok
}

// folded returns the key of m equal to name under case folding, the least
// of them when there are several, so that the choice does not depend on the
// order of a map.
func folded(m map[string]any, name string) (string, bool) {
	found := ""
	for k := range m {
		if strings.EqualFold(k, name) && (found == "" || k < found) {
			found = k
		}
	}
	return found, found != ""
}

func (d *decoder) table(t node, name string) (node, bool) {
	k, v, ok := field(t, name)
	if !ok {
		return node{}, false
	}
	n := t.child(k)
	if n.m, ok = v.(map[string]any); !ok {
		d.mismatch(n, v, "a table")
	}
	return n, ok
}

func (d *decoder) str(t node, name string) (string, bool) {
	return value[string](d, t, name, "a string")
}

func (d *decoder) boolean(t node, name string) (bool, bool) {
	return value[bool](d, t, name, "a boolean")
}

func (d *decoder) integer(t node, name string) (int, bool) {
	v, ok := value[int64](d, t, name, "an integer")
	return int(v), ok
}

// value returns the value of the key name of t when it is there and a T,
// the Go type the library gives the TOML type want.
func value[T any](d *decoder, t node, name, want string) (T, bool) {
	k, v, ok := field(t, name)
	if !ok {
		var zero T
		return zero, false
	}
	x, ok := v.(T)
	if !ok {
		d.mismatch(t.child(k), v, want)
	}
	return x, ok
}

// strs returns an array of strings; an array, even empty, is never nil.
func (d *decoder) strs(t node, name string) ([]string, bool) {
	k, v, ok := field(t, name)
	if !ok {
		return nil, false
	}
	elems, ok := Array(v)
	if !ok {
		d.mismatch(t.child(k), v, "an array")
		return nil, false
	}
	out := make([]string, len(elems))
	for i, e := range elems {
		if out[i], ok = e.(string); !ok {
			d.mismatch(t.child(k), e, "a string")
			return nil, false
		}
	}
	return out, true
}

// Array returns the elements of a TOML array in a tree the library
// decoded into maps: an array of values ([]any) or of tables
// ([]map[string]any). The tests file of testhook is read the same way.
func Array(v any) ([]any, bool) {
	switch a := v.(type) {
	case []any:
		return a, true
	case []map[string]any:
		elems := make([]any, len(a))
		for i, t := range a {
			elems[i] = t
		}
		return elems, true
	}
	return nil, false
}

// mismatch records that key n holds v where it wants a value of another
// type, if no mismatch was found earlier in the file. Located only now:
// a config without one is never scanned for keys.
func (d *decoder) mismatch(n node, v any, want string) {
	line := d.p.pos.line(n.path)
	if d.bad != nil && d.bad.Line <= line {
		return
	}
	path := strings.Join(n.key, ".")
	d.bad = &Problem{File: d.p.file, Line: line, Key: n.key.String(),
		Msg: fmt.Sprintf("is %s, want %s", kind(v), want), Hint: typeHint(path)}
}

// kind names, in TOML's words, the type of a value of the tree.
func kind(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case time.Time:
		return "a date-time"
	case map[string]any:
		return "a table"
	case []any, []map[string]any:
		return "an array"
	}
	return fmt.Sprintf("a %T", v) // none other: the library's types are these
}

// mappingPath is the path of the i-th [[mapping]].
func mappingPath(i int) string { return "mapping[" + strconv.Itoa(i) + "]" }
