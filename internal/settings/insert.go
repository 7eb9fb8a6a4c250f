package settings

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
)

// add inserts v as the last item of the container at path below root: the member key: v, or with key "" an element;
// missing containers of path are inserted around it. The caller has checked the shapes.
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

// nest is v inside new objects named by path, the innermost an object of key: v, or with key "" an array of v.
func nest(path []string, key string, v any) any {
	var inner any = []any{v}
	if key != "" {
		inner = map[string]any{key: v}
	}
	for i := len(path) - 1; i >= 0; i-- {
		inner = map[string]any{path[i]: inner}
	}
	return inner
}

// group is a matcher group, keys in the order Claude Code's /hooks writes.
type group struct {
	Matcher string    `json:"matcher,omitempty"`
	Hooks   []command `json:"hooks"`
}

type command struct {
	Type          string `json:"type"`
	Command       string `json:"command"`
	Timeout       int    `json:"timeout,omitempty"`
	StatusMessage string `json:"statusMessage,omitempty"`
	OnFailure     string `json:"onFailure,omitempty"`
}

// layoutOf reads how a container is written, from its first item: one item per line (multi) and how indented, or all
// on one line; an empty one is multi when its brackets are on lines of their own.
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

// appendItem inserts key: v (or, with key "", the element v) as the last item of c; an empty c takes its parent's
// layout (parentMulti).
func appendItem(text []byte, c *node, parentMulti, spaced bool, key string, v any) []byte {
	unit := indentUnit(text)
	multi, indent := layoutOf(text, c)
	if c.items() == 0 {
		multi = multi || parentMulti
		base := lineIndent(text, c.start)
		inner := render(key, v, multi, spaced, base+unit, unit)
		if multi {
			inner = "\n" + base + unit + inner + "\n" + base
		}
		return slices.Concat(text[:c.start+1], []byte(inner), text[c.end-1:])
	}
	_, at := c.span(c.items() - 1) // the end of the last item
	ins := ","
	if multi {
		ins += "\n" + indent
	} else if spaced {
		ins += " "
	}
	return slices.Concat(text[:at], []byte(ins+render(key, v, multi, spaced, indent, unit)), text[at:])
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

// render is key: v (or, with key "", v) in JSON: one item a line below indent (multi), or on one line, spaced or not.
func render(key string, v any, multi, spaced bool, indent, unit string) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a command reads the same in the file as in a terminal
	if !multi && spaced {
		indent, unit = "", "\t" // an indent's line breaks and tabs, which no JSON string holds raw, become spaces
	}
	if multi || spaced {
		enc.SetIndent(indent, unit)
	}
	enc.Encode(v)
	out := strings.TrimSuffix(b.String(), "\n")
	if !multi && spaced {
		out = strings.NewReplacer(",\n", ", ", "\n", "", "\t", "").Replace(out)
	}
	if key == "" {
		return out
	}
	if multi || spaced {
		return Quote(key) + ": " + out
	}
	return Quote(key) + ":" + out
}

// Quote writes v as compact JSON without HTML escaping.
func Quote(v any) string { return render("", v, false, false, "", "") }
