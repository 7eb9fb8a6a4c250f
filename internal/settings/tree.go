package settings

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
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
