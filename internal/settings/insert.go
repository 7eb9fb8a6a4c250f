package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// add inserts v as the last item of the container at path below root: the
// member key: v, or with key "" an element; missing containers of path are
// inserted around it. The caller has checked the shapes.
func add(text []byte, root *node, path []string, key string, v any) []byte {
	c, multi := root, true // a new top-level member gets a line of its own
	spaced := spacedColons(text, root)
	for i, name := range path {
		next := c.get(name)
		if next == nil {
			return appendItem(text, c, multi, spaced, name, nest(path[i+1:], key, v))
		}
		multi, _ = layoutOf(text, c)
		c = next
	}
	return appendItem(text, c, multi, spaced, key, v)
}

// nest is v inside new containers named by path, the innermost an object
// of key: v, or with key "" an array of v.
func nest(path []string, key string, v any) any {
	var inner any = array{v}
	if key != "" {
		inner = object{{key, v}}
	}
	for i := len(path) - 1; i >= 0; i-- {
		inner = object{{path[i], inner}}
	}
	return inner
}

// groupOf is h as a matcher group, keys in the order Claude Code's /hooks writes.
func groupOf(h Hook) object {
	cmd := object{{"type", "command"}, {"command", h.Command}}
	if h.Timeout > 0 {
		cmd = append(cmd, field{"timeout", h.Timeout})
	}
	if h.StatusMessage != "" {
		cmd = append(cmd, field{"statusMessage", h.StatusMessage})
	}
	if h.OnFailure != "" {
		cmd = append(cmd, field{"onFailure", h.OnFailure})
	}
	if h.Matcher == "" {
		return object{{"hooks", array{cmd}}}
	}
	return object{{"matcher", h.Matcher}, {"hooks", array{cmd}}}
}

// layoutOf reads how a container is written, from its first item: one
// item per line (multi) and how indented, or all on one line; an empty one
// is multi when its brackets are on lines of their own.
func layoutOf(text []byte, c *node) (multi bool, indent string) {
	if c.items() == 0 {
		return bytes.ContainsRune(text[c.start:c.end], '\n'), ""
	}
	first, _ := c.span(0)
	if !bytes.ContainsRune(text[c.start:first], '\n') {
		return false, ""
	}
	return true, lineIndent(text, first)
}

// appendItem inserts key: v (or, with key "", the element v) as the last
// item of c; an empty c takes its parent's layout (parentMulti).
func appendItem(text []byte, c *node, parentMulti, spaced bool, key string, v any) []byte {
	unit := indentUnit(text)
	item := func(indent string, multi bool) string {
		var b strings.Builder
		if key != "" {
			b.WriteString(Quote(key))
			b.WriteString(colon(spaced || multi))
		}
		render(&b, v, multi, indent, unit, spaced || multi)
		return b.String()
	}

	multi, indent := layoutOf(text, c)
	if c.items() == 0 {
		multi = multi || parentMulti
		base := lineIndent(text, c.start)
		inner := item(base+unit, multi)
		if multi {
			inner = "\n" + base + unit + inner + "\n" + base
		}
		return slices.Concat(text[:c.start+1], []byte(inner), text[c.end-1:])
	}
	_, at := c.span(c.items() - 1) // the end of the last item
	var ins strings.Builder
	sep(&ins, 1, multi, indent, spaced) // as after any item but the first
	ins.WriteString(item(indent, multi))
	return slices.Concat(text[:at], []byte(ins.String()), text[at:])
}

// lineIndent returns the blanks that start the line holding offset off.
func lineIndent(text []byte, off int) string {
	return blanks(text[bytes.LastIndexByte(text[:off], '\n')+1:])
}

// indentUnit is the file's first indented line's indent; two spaces when none is.
func indentUnit(text []byte) string {
	for _, line := range bytes.Split(text, []byte("\n")) {
		if b := blanks(line); b != "" && len(b) < len(line) {
			return b
		}
	}
	return "  "
}

// blanks returns the spaces and tabs that b starts with.
func blanks(b []byte) string {
	return string(b[:len(b)-len(bytes.TrimLeft(b, " \t"))])
}

// spacedColons reports whether the file's first member writes "key": value.
func spacedColons(text []byte, root *node) bool {
	if len(root.members) == 0 {
		return true
	}
	colon := bytes.LastIndexByte(text[:root.members[0].val.start], ':')
	return strings.IndexByte(" \t\n", text[colon+1]) >= 0
}

// object and array are the values add writes, in order.
type (
	object []field
	array  []any
	field  struct {
		key string
		val any
	}
)

func render(b *strings.Builder, v any, multi bool, indent, unit string, spaced bool) {
	items, open, end := []field(nil), "{", "}"
	switch v := v.(type) {
	case object:
		items = v
	case array:
		open, end = "[", "]"
		for _, e := range v {
			items = append(items, field{val: e})
		}
	case string:
		b.WriteString(Quote(v))
		return
	default: // int, bool
		fmt.Fprint(b, v)
		return
	}
	b.WriteString(open)
	for i, f := range items {
		sep(b, i, multi, indent+unit, spaced)
		if open == "{" {
			b.WriteString(Quote(f.key) + colon(spaced))
		}
		render(b, f.val, multi, indent+unit, unit, spaced)
	}
	if multi && len(items) > 0 {
		b.WriteString("\n" + indent)
	}
	b.WriteString(end)
}

// sep writes what comes before item i: a comma after an earlier one, then
// a new line and the indent, or a space when spaced.
func sep(b *strings.Builder, i int, multi bool, indent string, spaced bool) {
	if i > 0 {
		b.WriteByte(',')
		if !multi && spaced {
			b.WriteByte(' ')
		}
	}
	if multi {
		b.WriteString("\n" + indent)
	}
}

func colon(spaced bool) string {
	if spaced {
		return ": "
	}
	return ":"
}

// Quote writes s as a JSON string without HTML escaping, so a command
// reads the same in the file as in a terminal.
func Quote(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}
