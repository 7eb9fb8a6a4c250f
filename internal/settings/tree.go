package settings

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/stopgate/stopgate/internal/atomicfile"
)

// node is one JSON value and where it lies in the text, so that an edit can insert or cut at a byte offset and leave
// every other byte alone.
type node struct {
	kind       byte     // '{', '[', '"', or 'v' for any other scalar
	start, end int      // the value's bytes: text[start:end]
	str        string   // a string's value, or a scalar's literal text
	members    []member // objects, in text order
	elems      []*node  // arrays
}

type member struct {
	key      string
	keyStart int
	val      *node
}

// get returns the value of key (nil if none); of duplicate keys the last wins, as for the client.
func (n *node) get(key string) *node {
	for i := len(n.list()) - 1; i >= 0; i-- {
		if n.members[i].key == key {
			return n.members[i].val
		}
	}
	return nil
}

func (n *node) items() int { return len(n.elems) + len(n.members) }

// text returns string n's value; "" when n is nil or no string.
func (n *node) text() string {
	if n == nil || n.kind != '"' {
		return ""
	}
	return n.str
}

// list and elements return the members or elements of n; none when n is nil.
func (n *node) list() []member {
	if n == nil {
		return nil
	}
	return n.members
}

func (n *node) elements() []*node {
	if n == nil {
		return nil
	}
	return n.elems
}

// span returns where item i of container n lies, a member from its key.
func (n *node) span(i int) (start, end int) {
	if n.kind == '[' {
		return n.elems[i].start, n.elems[i].end
	}
	return n.members[i].keyStart, n.members[i].val.end
}

func (n *node) kindName() string {
	key := map[bool]string{false: string(n.kind), true: n.str}[n.kind == 'v'] // a scalar by its literal
	return cmp.Or(map[string]string{"{": "an object", "[": "an array", `"`: "a string", "true": "a boolean", "false": "a boolean", "null": "null"}[key], "a number")
}

// Error is a settings file that is not JSON or not shaped as the client expects, at a 1-based line and column (in
// characters).
type Error struct {
	Line, Column int
	Msg          string
}

func (e *Error) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Column, e.Msg) }

// expect refuses n, when there, unless it is of kind: "NAME is KIND, want WHAT".
func expect(text []byte, n *node, kind byte, name, what string) error {
	if n == nil || n.kind == kind {
		return nil
	}
	return ErrorAt(text, n.start, "%s is %s, want %s", name, n.kindName(), what)
}

// ErrorAt returns an Error at byte offset off of text.
func ErrorAt(text []byte, off int, format string, args ...any) *Error {
	line, col := position(text, off)
	return &Error{Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// position returns the 1-based line and column of byte offset off.
func position(text []byte, off int) (line, col int) {
	before := text[:min(off, len(text))]
	line = bytes.Count(before, []byte("\n")) + 1
	return line, utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
}

// parseObject parses data, empty as {}, and refuses anything but an object, named name.
func parseObject(data []byte, name string) ([]byte, *node, error) {
	text := normalize(data)
	root, err := parse(text)
	if err == nil {
		err = expect(text, root, '{', name, "an object")
	}
	return text, root, err
}

// parse checks text with encoding/json, for its error messages, then builds the tree of byte spans from its tokens.
func parse(text []byte) (*node, error) {
	if err := json.Unmarshal(text, new(json.RawMessage)); err != nil { // checked, not built
		if se, ok := errors.AsType[*json.SyntaxError](err); ok {
			return nil, ErrorAt(text, max(int(se.Offset)-1, 0), "%s", se.Error())
		}
		return nil, err
	}
	return build(json.NewDecoder(bytes.NewReader(text)), text), nil
}

// build reads the next value of dec over text, already accepted.
func build(dec *json.Decoder, text []byte) *node {
	n := &node{start: next(dec, text)}
	tok, _ := dec.Token()
	switch t := tok.(type) {
	case json.Delim: // '{' or '['
		n.kind = byte(t)
		for dec.More() {
			if n.kind == '[' {
				n.elems = append(n.elems, build(dec, text))
				continue
			}
			keyStart := next(dec, text)
			key, _ := dec.Token()
			n.members = append(n.members, member{key: key.(string), keyStart: keyStart, val: build(dec, text)})
		}
		dec.Token() // the closing bracket
	case string:
		n.kind, n.str = '"', t
	default:
		n.kind, n.str = 'v', string(text[n.start:dec.InputOffset()])
	}
	n.end = int(dec.InputOffset())
	return n
}

// next returns the offset of dec's next token, past blanks, commas and colons.
func next(dec *json.Decoder, text []byte) int {
	off := int(dec.InputOffset())
	return off + len(text[off:]) - len(bytes.TrimLeft(text[off:], " \t\n\r,:"))
}

// Named prefixes err with the file name, and an *Error's line and column.
func Named(name string, err error) error {
	if se, ok := errors.AsType[*Error](err); ok {
		return fmt.Errorf("%s:%d:%d: %s", name, se.Line, se.Column, se.Msg)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// add inserts v as the last item of the container at path in text (empty: {}): the member key: v, or with key "" an
// element; missing containers of path are inserted around it. The caller has checked the shapes.
func add(text []byte, path []string, key string, v any) []byte {
	text = normalize(text)
	root, _ := parse(text)
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

// WriteFile replaces the file at path with data atomically, keeping its permissions (a new one 0644) and, for a
// symlink, its link.
func WriteFile(path string, data []byte) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, atomicfile.Options{TempPrefix: "." + filepath.Base(path) + ".tmp-", Perm: mode})
}

// ReadIfThere reads path; a missing file is empty (nil).
func ReadIfThere(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}
