// Package settings edits clients' settings JSON as a careful person does by hand: an edit inserts or cuts, in the
// file's layout, every other byte kept; text not JSON, or not shaped as the client expects, is an *Error at line:column.
package settings

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/stopgate/stopgate/internal/atomicfile"
)

// Hook is one command registered for an event.
type Hook struct {
	Event         string
	Matcher       string // tool-name pattern for tool events ("Read", "Edit|Write"); "" for the others
	Command       string // a shell command line
	Timeout       int    // seconds; 0 leaves the client's default
	StatusMessage string // what Claude Code shows while the hook runs
	OnFailure     string // "block": a hook that cannot start, times out or answers wrongly refuses its call
}

func (h Hook) String() string {
	return h.Event + strings.TrimSuffix(" ("+h.Matcher+")", " ()") + " → " + Program(h.Command)
}

// Found says whether, and where, a hook is registered: its program for its event, under matchers covering its tools.
type Found struct {
	Hook
	Registered bool   // every tool of the matcher is covered
	Uncovered  string // the tools not covered, as a matcher; "" when Registered
	Command    string // the registered command line, "" when not registered
	Timeout    int    // the registered command's timeout, 0 when it gives none
	OnFailure  string // the registered command's onFailure, "" when it gives none
	Line       int    // the line of the registered command, 0 when not registered
}

// Merge adds each wanted hook not registered as a new matcher group, last, of the tools no group covers; and those.
func Merge(data []byte, want []Hook) ([]byte, []Hook, error) {
	text := data // add normalizes it: unchanged when nothing is added
	var added []Hook
	for _, h := range want {
		f, err := Parse(text).lookup(h)
		if err != nil {
			return nil, nil, err
		}
		if f.Registered {
			continue
		}
		h.Matcher = f.Uncovered
		text = add(text, []string{"hooks", h.Event}, "", group{h.Matcher, []command{{"command", h.Command, h.Timeout, h.StatusMessage, h.OnFailure}}})
		added = append(added, h)
	}
	return text, added, nil
}

// normalize makes empty input an empty object.
func normalize(data []byte) []byte {
	if len(bytes.TrimSpace(data)) == 0 {
		return []byte("{\n}\n")
	}
	return data
}

func (d *Doc) lookup(h Hook) (Found, error) {
	f, text, hooks := Found{Hook: h}, d.text, d.root.get("hooks")
	list := hooks.get(h.Event)
	if err := cmp.Or(d.object("settings"), expect(text, hooks, '{', `"hooks"`, "an object of event names"),
		expect(text, list, '[', "hooks."+h.Event, "an array of matcher groups")); err != nil {
		return f, err
	}
	prog := Program(h.Command)
	uncovered := strings.Split(h.Matcher, "|") // "": one empty name
	for _, g := range list.elements() {
		cmd := commandRunning(g, prog)
		if cmd == nil {
			continue
		}
		matcher := g.get("matcher").text()
		rest := slices.DeleteFunc(slices.Clone(uncovered), func(t string) bool { return covers(matcher, t) })
		if len(rest) < len(uncovered) && f.Line == 0 {
			c := cmd.get("command")
			f.Line, _ = position(text, c.start)
			f.Command, f.OnFailure = c.str, cmd.get("onFailure").text()
			if t := cmd.get("timeout"); t != nil && t.kind == 'v' {
				fmt.Sscan(t.str, &f.Timeout)
			}
		}
		uncovered = rest
	}
	f.Registered, f.Uncovered = len(uncovered) == 0, strings.Join(uncovered, "|")
	return f, nil
}

// commandRunning returns the first hook of group g whose command runs prog.
func commandRunning(g *node, prog string) *node {
	for _, h := range g.get("hooks").elements() {
		if c := h.get("command"); c.text() != "" && Program(c.str) == prog {
			return h
		}
	}
	return nil
}

// covers reports whether a group's matcher, an anchored pattern ("" and "*": all), applies to tool.
func covers(matcher, tool string) bool {
	if tool == "" || matcher == "" || matcher == "*" {
		return true
	}
	ok, err := regexp.MatchString("^(?:"+matcher+")$", tool)
	return ok || err != nil && matcher == tool
}

// Program is the base name of the program a command line (or launcher's first candidate) runs.
func Program(cmd string) string { return path.Base(Paths(cmd)[0]) }

// FirstWord returns the first word of a command line, unquoted, its variables left.
func FirstWord(cmd string) string {
	_, w := word(strings.TrimLeft(cmd, " \t"))
	return w
}

// word reads the first word of s, as written and unquoted, up to a blank or ; & | outside quotes.
func word(s string) (raw, unquoted string) {
	var b strings.Builder
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			b.WriteByte(c)
		case c == '"' || c == '\'':
			quote = c
		case c == '\\' && i+1 < len(s):
			i++
			b.WriteByte(s[i])
		case c == ' ' || c == '\t' || c == ';' || c == '&' || c == '|':
			return s[:i], b.String()
		default:
			b.WriteByte(c)
		}
	}
	return s, b.String()
}

// Doc is one settings file parsed once, for every question asked of it.
type Doc struct {
	text []byte
	root *node
	err  error // the text is not JSON
}

// Parse parses data, empty as {}; text that is not JSON is each question's error.
func Parse(data []byte) *Doc {
	d := &Doc{text: normalize(data)}
	d.root, d.err = parse(d.text)
	return d
}

// JSON reports whether the text is JSON, whatever its shape.
func (d *Doc) JSON() bool { return d.err == nil }

// Lookup reports, for each wanted hook, whether the file registers it.
func (d *Doc) Lookup(want []Hook) ([]Found, error) {
	if d.err != nil {
		return nil, d.err
	}
	out := make([]Found, len(want))
	for i, h := range want {
		var err error
		if out[i], err = d.lookup(h); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DisablesHooks reports whether the file sets disableAllHooks to anything but false.
func (d *Doc) DisablesHooks() bool {
	v := d.root.get("disableAllHooks")
	return v != nil && (v.kind != 'v' || v.str != "false")
}

// Env returns the names the file's env object sets (for every hook), in text order.
func (d *Doc) Env() []string { return keys(d.root.get("env")) }

// HookEnv returns the names hooks.EVENT[].hooks[].env sets (Gemini CLI's, Qwen Code's).
func (d *Doc) HookEnv() []string {
	var names []string
	for _, ev := range d.root.get("hooks").list() {
		for _, group := range ev.val.elements() {
			for _, h := range group.get("hooks").elements() {
				names = append(names, keys(h.get("env"))...)
			}
		}
	}
	return names
}

func keys(n *node) []string {
	var names []string
	for _, m := range n.list() {
		names = append(names, m.key)
	}
	return names
}

// Removal says what Remove took out and what it left.
type Removal struct {
	Removed []string // "Stop → gate", "sandbox.enabled", "Edit(/mappings.toml)"
	Left    []string // each entry of stopgate's that was changed by hand since
}

// Remove takes out stopgate's entries still exactly as gate init writes them (a group of one command of want, the wall's sandbox keys at its values,
// the rules of deny) and containers this empties, every other byte kept; a group running one of programs unlike every want stays, named in Left.
func Remove(data []byte, want []Hook, programs []string, deny []string) ([]byte, Removal, error) {
	var r Removal
	d := Parse(data)
	if _, err := d.Wall(); err != nil {
		return nil, r, err
	}
	if _, err := d.Lookup(want); err != nil {
		return nil, r, err
	}
	text := d.text
	for _, m := range d.root.get("hooks").list() {
		for _, g := range m.val.elements() {
			runs := slices.IndexFunc(programs, func(p string) bool { return commandRunning(g, p) != nil })
			if _, own := ownGroup(text, g, m.key, want); !own && runs >= 0 {
				line, _ := position(text, g.start)
				r.Left = append(r.Left, fmt.Sprintf("hooks.%s, line %d: runs %s, but is not as gate init wrote it", m.key, line, programs[runs]))
			}
		}
	}
groups: // one removal at a time, each on a fresh parse
	for {
		root, _ := parse(text)
		for _, m := range root.get("hooks").list() {
			for i, g := range m.val.elements() {
				if h, ok := ownGroup(text, g, m.key, want); ok {
					text = prune(cut(text, m.val, i, i+1), []string{"hooks", m.key})
					r.Removed = append(r.Removed, h.String())
					continue groups
				}
			}
		}
		break
	}
	for _, k := range wallKeys {
		sb := at(text, "sandbox")
		if i := memberIndex(sb, k.key); i >= 0 && sb.kids[i].val.kind == 'v' && sb.kids[i].val.str == fmt.Sprint(k.want) {
			text = prune(cut(text, sb, i, i+1), []string{"sandbox"})
			r.Removed = append(r.Removed, "sandbox."+k.key)
		}
	}
	for _, rule := range deny {
		list := at(text, "permissions", "deny")
		if i := slices.IndexFunc(list.elements(), func(e *node) bool { return e.kind == '"' && e.str == rule }); i >= 0 {
			text = prune(cut(text, list, i, i+1), []string{"permissions", "deny"})
			r.Removed = append(r.Removed, rule)
		}
	}
	if len(r.Removed) == 0 {
		return data, r, nil
	}
	return text, r, nil
}

// spelled reports whether object n's keys are all of keys, case and all (encoding/json takes "Command" for command).
func (n *node) spelled(keys ...string) bool {
	return !slices.ContainsFunc(n.list(), func(m member) bool { return !slices.Contains(keys, m.key) })
}

// ownGroup reports whether g is a group gate init wrote for event: a matcher within the hook's, one command of want
// with its type, command and timeout, a status message or onFailure of any text, nothing else.
func ownGroup(text []byte, g *node, event string, want []Hook) (Hook, bool) {
	var own group // spelled is stricter than encoding/json's DisallowUnknownFields
	if json.Unmarshal(text[g.start:g.end], &own) != nil || len(own.Hooks) != 1 || own.Hooks[0].Type != "command" ||
		!g.spelled("matcher", "hooks") || !g.get("hooks").elements()[0].spelled("type", "command", "timeout", "statusMessage", "onFailure") {
		return Hook{}, false
	}
	for _, h := range want {
		if c := own.Hooks[0]; h.Event == event && SameRun(h.Command, c.Command) && c.Timeout == h.Timeout && narrower(own.Matcher, h.Matcher) {
			h.Matcher = own.Matcher
			return h, true
		}
	}
	return Hook{}, false
}

// SameRun reports whether commands a and b are equal, or launchers of the same candidates and arguments, any form.
func SameRun(a, b string) bool {
	if a == b {
		return true
	}
	wa, aok := Candidates(a)
	wb, bok := Candidates(b)
	return aok && bok && slices.Equal(wa, wb) && Args(a) == Args(b)
}

// narrower reports whether every tool of matcher is one of outer's.
func narrower(matcher, outer string) bool {
	if matcher == "" || outer == "" {
		return matcher == outer
	}
	return !slices.ContainsFunc(strings.Split(matcher, "|"), func(t string) bool { return !slices.Contains(strings.Split(outer, "|"), t) })
}

func memberIndex(n *node, key string) int {
	return slices.IndexFunc(n.list(), func(m member) bool { return m.key == key })
}

// at parses text, and returns the value at path (nil: none).
func at(text []byte, path ...string) *node {
	n, _ := parse(text)
	for _, k := range path {
		n = n.get(k)
	}
	return n
}

// cut removes items i to j-1 of container c with their separators.
func cut(text []byte, c *node, i, j int) []byte {
	var from, to int
	switch {
	case i == 0 && j == c.items():
		from, to = c.start+1, c.end-1
	case j < c.items():
		from, _ = c.span(i)
		to, _ = c.span(j)
	default:
		_, from = c.span(i - 1)
		_, to = c.span(j - 1)
	}
	return append(text[:from:from], text[to:]...)
}

// prune removes the value at path, then each parent, while it is empty.
func prune(text []byte, path []string) []byte {
	for ; len(path) > 0; path = path[:len(path)-1] {
		parent := at(text, path[:len(path)-1]...)
		i := memberIndex(parent, path[len(path)-1])
		if i < 0 || parent.kids[i].val.kind != '[' && parent.kids[i].val.kind != '{' || parent.kids[i].val.items() > 0 {
			return text
		}
		text = cut(text, parent, i, i+1)
	}
	return text
}

// node is one JSON value and where its bytes lie, so an edit can insert or cut at an offset, every other byte kept.
type node struct {
	kind       byte     // '{', '[', '"', or 'v' for any other scalar
	start, end int      // the value's bytes: text[start:end]
	str        string   // a string's value, or a scalar's literal text
	kids       []member // an object's members or an array's elements, in text order
}

type member struct { // an item of a container, from its key (an element: its value) to its value's end
	key   string
	start int
	val   *node
}

// get returns the value of key (nil if none); of duplicate keys the last wins, as for the client.
func (n *node) get(key string) *node {
	for _, m := range slices.Backward(n.list()) {
		if m.key == key {
			return m.val
		}
	}
	return nil
}

func (n *node) items() int { return len(n.kids) }

// text returns string n's value; "" when n is nil or no string.
func (n *node) text() string {
	if n == nil || n.kind != '"' {
		return ""
	}
	return n.str
}

// list returns the members of object n, elements those of array n; none for any other n, or nil.
func (n *node) list() []member { return n.of('{') }

func (n *node) elements() []*node {
	var out []*node
	for _, m := range n.of('[') {
		out = append(out, m.val)
	}
	return out
}

func (n *node) of(kind byte) []member {
	if n == nil || n.kind != kind {
		return nil
	}
	return n.kids
}

func (n *node) span(i int) (start, end int) { return n.kids[i].start, n.kids[i].val.end }

func (n *node) kindName() string {
	key := map[bool]string{false: string(n.kind), true: n.str}[n.kind == 'v'] // a scalar by its literal
	return cmp.Or(map[string]string{"{": "an object", "[": "an array", `"`: "a string", "true": "a boolean", "false": "a boolean", "null": "null"}[key], "a number")
}

// Error is a settings file not JSON, or not shaped as the client expects, at a 1-based line and column (characters).
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

// object refuses text that is not JSON, or not an object, named name.
func (d *Doc) object(name string) error {
	return cmp.Or(d.err, expect(d.text, d.root, '{', name, "an object"))
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
			m := member{start: next(dec, text)}
			if n.kind == '{' {
				key, _ := dec.Token()
				m.key = key.(string)
			}
			m.val = build(dec, text)
			n.kids = append(n.kids, m)
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

// appendItem inserts key: v (or, with key "", the element v) as the last item of c; an empty c takes its parent's layout (parentMulti).
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
func blanks(b []byte) string { return string(b[:len(b)-len(bytes.TrimLeft(b, " \t"))]) }

// spacedColons reports whether the file's first member writes "key": value.
func spacedColons(text []byte, root *node) bool {
	if len(root.list()) == 0 {
		return true
	}
	colon := bytes.LastIndexByte(text[:root.kids[0].val.start], ':')
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
	switch {
	case key == "":
		return out
	case multi || spaced:
		return Quote(key) + ": " + out
	}
	return Quote(key) + ":" + out
}

// Quote writes v as compact JSON without HTML escaping.
func Quote(v any) string { return render("", v, false, false, "", "") }

// WriteFile replaces path's file with data atomically, keeping its permissions (new: 0644) and, for a symlink, the link.
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

// wallKey is one of Claude Code's sandbox settings that make its OS sandbox a wall (docs/security.md).
type wallKey struct {
	key  string
	want bool
	why  string // what the opposite value does
}

var wallKeys = []wallKey{
	{"enabled", true, "the agent's Bash runs outside the OS sandbox"},
	{"failIfUnavailable", true, "a missing sandbox tool only warns, and Bash runs unsandboxed"},
	{"allowUnsandboxedCommands", false, "the agent can ask to run a command outside the sandbox (dangerouslyDisableSandbox)"},
}

// Walls is the wall as the client merges its files: a later file's key wins, deny rules and excluded commands add up.
type Walls struct {
	Read     int                // how many files were there
	set      map[string]wallSet // the wall's keys the files set, each as the file that counts sets it
	written  bool               // a file sets a key as gate init writes it
	Deny     []string           // permissions.deny
	Excluded []string           // sandbox.excludedCommands, which run outside the sandbox
}

// wallSet is one of the wall's keys as a file sets it; a non-boolean is false.
type wallSet struct {
	file, line int
	wallKey
	value bool
}

// Value returns the value of key that counts; false when unset.
func (w Walls) Value(key string) bool { return w.set[key].value }

// Wall reads the wall's settings from the file.
func (d *Doc) Wall() (Walls, error) {
	w, _, err := ReadWalls([]*Doc{d})
	return w, err
}

// MergeWall returns data with each sandbox key absent and each rule of deny permissions.deny lacks inserted, and
// those; a key set against the wall is the user's decision, left as it is and reported in w.
func MergeWall(data []byte, deny []string) (out []byte, added []string, w Walls, err error) {
	if w, err = Parse(data).Wall(); err != nil {
		return nil, nil, w, err
	}
	text := data // add normalizes it: unchanged when nothing is added
	for _, k := range wallKeys {
		if _, set := w.set[k.key]; !set {
			text = add(text, []string{"sandbox"}, k.key, k.want)
			added = append(added, "sandbox."+k.key)
		}
	}
	for _, rule := range deny {
		if !slices.Contains(w.Deny, rule) {
			text = add(text, []string{"permissions", "deny"}, "", rule)
			w.Deny = append(w.Deny, rule)
			added = append(added, rule)
		}
	}
	return text, added, w, nil
}

// DenyRule is Claude Code's rule denying Edit of path (and the sandbox's writes): "/x" from the project root, "//x"
// absolute, "~/x" under home; a folder's covers what is in it.
func DenyRule(root, home, path string, dir bool) string {
	spelled := "/" + path
	if rest, ok := below(path, root); ok {
		spelled = rest
	} else if rest, ok := below(path, home); ok {
		spelled = "~" + rest
	}
	if dir {
		spelled = strings.TrimSuffix(spelled, "/") + "/**"
	}
	return "Edit(" + spelled + ")"
}

// below returns path from where dir ends ("/x") when path is below dir (slash-separated, clean).
func below(path, dir string) (string, bool) {
	dir = strings.TrimSuffix(dir, "/")
	rest, ok := strings.CutPrefix(path, dir)
	return rest, ok && dir != "" && strings.HasPrefix(rest, "/")
}

// ReadWalls reads the wall from the client's files in its order, nil for one not there; bad: one that does not parse.
func ReadWalls(files []*Doc) (w Walls, bad int, err error) {
	w.set = map[string]wallSet{}
	for i, d := range files {
		if d == nil {
			continue
		}
		text, sb, perms := d.text, d.root.get("sandbox"), d.root.get("permissions")
		deny := perms.get("deny")
		if err := cmp.Or(d.object("settings"), expect(text, sb, '{', `"sandbox"`, "an object"),
			expect(text, perms, '{', `"permissions"`, "an object"), expect(text, deny, '[', `"permissions.deny"`, "an array of rules")); err != nil {
			return Walls{}, i, err
		}
		w.Read++
		for _, k := range wallKeys {
			if v := sb.get(k.key); v != nil {
				line, _ := position(text, v.start)
				w.set[k.key] = wallSet{file: i, line: line, wallKey: k, value: v.kind == 'v' && v.str == "true"}
				w.written = w.written || w.set[k.key].value == k.want
			}
		}
		for _, e := range sb.get("excludedCommands").elements() {
			w.Excluded = append(w.Excluded, e.str)
		}
		for _, e := range deny.elements() {
			if e.kind == '"' {
				w.Deny = append(w.Deny, e.str)
			}
		}
	}
	return w, -1, nil
}

// Walled reports whether the settings files (as ReadWalls) wall off what rule denies from the agent's writes: every
// key as the wall wants it, no command excluded; why says what is missing.
func Walled(files [][]byte, rule string) (walled bool, why string) {
	docs := make([]*Doc, len(files))
	for i, data := range files {
		if data != nil {
			docs[i] = Parse(data)
		}
	}
	w, _, err := ReadWalls(docs)
	switch {
	case err != nil:
		return false, "a settings file does not parse: " + err.Error()
	case w.Read == 0:
		return false, "no Claude Code settings"
	}
	for _, k := range wallKeys {
		if s, set := w.set[k.key]; !set || s.value != k.want {
			return false, fmt.Sprintf("sandbox.%s is not %t", k.key, k.want)
		}
	}
	if len(w.Excluded) > 0 {
		return false, "sandbox.excludedCommands run outside the sandbox"
	}
	if lack := w.Lacking([]string{rule}); len(lack) > 0 {
		return false, "permissions.deny lacks " + rule
	}
	return true, ""
}

// Present reports whether a sandbox key as gate init writes it, or a rule of rules, is there.
func (w Walls) Present(rules []string) bool { return w.written || len(w.Lacking(rules)) < len(rules) }

// Against is a sandbox key set against the wall where its value counts.
type Against struct {
	File, Line int    // the index of its file in the files read, and its line there
	Text       string // "sandbox.KEY is VALUE: WHY"
}

// Against returns the keys set against the wall where the value that counts is.
func (w Walls) Against() []Against {
	var out []Against
	for _, k := range wallKeys {
		if s, set := w.set[k.key]; set && s.value != s.want {
			out = append(out, Against{File: s.file, Line: s.line, Text: fmt.Sprintf("sandbox.%s is %t: %s", s.key, s.value, s.why)})
		}
	}
	slices.SortStableFunc(out, func(a, b Against) int { return cmp.Compare(a.File, b.File) }) // in file order
	return out
}

// Unset returns the wall's keys no file sets, as "sandbox.KEY".
func (w Walls) Unset() []string {
	var out []string
	for _, k := range wallKeys {
		if _, set := w.set[k.key]; !set {
			out = append(out, "sandbox."+k.key)
		}
	}
	return out
}

// Lacking returns the rules of rules no file denies.
func (w Walls) Lacking(rules []string) []string {
	return slices.DeleteFunc(slices.Clone(rules), func(r string) bool { return slices.Contains(w.Deny, r) })
}

// EditAction returns what opencode.json's permission.edit decides for path (from the worktree): the last matching
// rule's action, "" if none; a string permission or edit is the action for every path (OpenCode 1.18.33).
func EditAction(data []byte, path string) (string, error) {
	d := Parse(data)
	if err := d.object("opencode.json"); err != nil {
		return "", err
	}
	perm := d.root.get("permission")
	edit := perm.get("edit")
	for _, n := range []*node{perm, edit} {
		if n != nil && n.kind == '"' {
			return n.str, nil
		}
	}
	// A key written twice keeps its first place, as in JavaScript, and its last value.
	action := ""
	for i, m := range edit.list() {
		first := !slices.ContainsFunc(edit.kids[:i], func(o member) bool { return o.key == m.key })
		if v := edit.get(m.key); first && v.kind == '"' && wildcard(m.key, path) {
			action = v.str
		}
	}
	return action, nil
}

// wildcard matches as OpenCode's Wildcard.match: * any run, ? any one character.
func wildcard(pattern, path string) bool {
	re := strings.NewReplacer(`\*`, ".*", `\?`, ".").Replace(regexp.QuoteMeta(pattern))
	ok, _ := regexp.MatchString("(?s)^"+re+"$", path)
	return ok
}

// MergeEditDeny returns data with a "deny" rule last in permission.edit (so it wins) for each pattern not denied yet;
// note says why a pattern or the whole file was left alone.
func MergeEditDeny(data []byte, patterns []string) (out []byte, added []string, note string, err error) {
	d := Parse(data)
	if err := d.object("opencode.json"); err != nil {
		return nil, nil, "", err
	}
	n := d.root
	for _, k := range [][3]string{{"permission", "permission", "tool"}, {"edit", "permission.edit", "file"}} {
		if n = n.get(k[0]); n != nil && n.kind == '"' {
			return data, nil, Quote(k[1]) + " is " + Quote(n.str) + ", one action for every " + k[2], nil
		} else if err := expect(d.text, n, '{', Quote(k[1]), "an object or an action"); err != nil {
			return nil, nil, "", err
		}
	}
	var overridden []string
	text := data // add normalizes it: unchanged when nothing is added
	for _, p := range patterns {
		if a, _ := EditAction(text, probe(p)); a == "deny" {
			continue
		}
		if at(text, "permission", "edit", p) != nil {
			overridden = append(overridden, p)
			continue
		}
		text = add(text, []string{"permission", "edit"}, p, "deny")
		added = append(added, p)
	}
	if len(overridden) > 0 {
		note = "a later rule overrides the rule for " + strings.Join(overridden, ", ")
	}
	return text, added, note, nil
}

// EditDenied returns the patterns whose files opencode.json does not deny.
func EditDenied(data []byte, patterns []string) (open []string, err error) {
	for _, p := range patterns {
		if a, err := EditAction(data, probe(p)); err != nil {
			return nil, err
		} else if a != "deny" {
			open = append(open, p)
		}
	}
	return open, nil
}

// probe is a path a pattern stands for: "dir/*" a file in dir.
func probe(pattern string) string {
	if d, ok := strings.CutSuffix(pattern, "/*"); ok {
		return d + "/x"
	}
	return pattern
}

// RemoveEditDeny returns data without the "deny" rules MergeEditDeny added for patterns: the longest run last in
// permission.edit, in patterns' order, that MergeEditDeny would write back byte for byte once taken out.
func RemoveEditDeny(data []byte, patterns []string) (out []byte, removed []string, err error) {
	if _, _, _, err := MergeEditDeny(data, nil); err != nil {
		return nil, nil, err
	}
	text := normalize(data)
	edit := at(text, "permission", "edit")
	for i := range edit.list() {
		run := keys(edit)[i:] // patterns are unique: so must run be, in their order
		if !slices.Equal(run, slices.DeleteFunc(slices.Clone(patterns), func(p string) bool { return !slices.Contains(run, p) })) {
			continue
		}
		stripped := cut(text, edit, i, edit.items())
		for _, cand := range [][]byte{prune(stripped, []string{"permission", "edit"}), stripped} {
			if back, added, _, err := MergeEditDeny(cand, run); err == nil && len(added) == len(run) && bytes.Equal(back, text) {
				return cand, run, nil
			}
		}
	}
	return data, nil, nil
}
