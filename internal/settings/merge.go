// Package settings edits a Claude Code settings file as a careful person does by hand: an edit only inserts or cuts,
// keeping every other byte, in the file's own layout. Text that is not JSON, or not shaped as the client expects, is
// refused with an *Error naming line and column.
package settings

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
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
	if h.Matcher == "" {
		return h.Event + " → " + Program(h.Command)
	}
	return h.Event + " (" + h.Matcher + ") → " + Program(h.Command)
}

// Found says whether, and where, a wanted hook is registered: a command running its program, for its event, under
// matchers covering its tools.
type Found struct {
	Hook
	Registered bool   // every tool of the matcher is covered
	Uncovered  string // the tools not covered, as a matcher; "" when Registered
	Command    string // the registered command line, "" when not registered
	Timeout    int    // the registered command's timeout, 0 when it gives none
	OnFailure  string // the registered command's onFailure, "" when it gives none
	Line       int    // the line of the registered command, 0 when not registered
}

// Lookup reports, for each wanted hook, whether data registers it.
func Lookup(data []byte, want []Hook) ([]Found, error) { return Parse(data).Lookup(want) }

// Merge returns data with each wanted hook not registered added as a new matcher group, last, of the tools no group
// covers; and those hooks.
func Merge(data []byte, want []Hook) ([]byte, []Hook, error) {
	text := data // add normalizes it: unchanged when nothing is added
	var added []Hook
	for _, h := range want {
		f, err := Parse(text).Lookup([]Hook{h})
		if err != nil {
			return nil, nil, err
		}
		if f[0].Registered {
			continue
		}
		h.Matcher = f[0].Uncovered
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

func lookup(text []byte, root *node, h Hook) (Found, error) {
	f := Found{Hook: h}
	hooks := root.get("hooks")
	list := hooks.get(h.Event)
	if err := cmp.Or(expect(text, root, '{', "settings", "an object"), expect(text, hooks, '{', `"hooks"`, "an object of event names"),
		expect(text, list, '[', "hooks."+h.Event, "an array of matcher groups")); err != nil {
		return f, err
	}
	prog := Program(h.Command)
	uncovered := tools(h.Matcher)
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
	f.Registered = len(uncovered) == 0
	f.Uncovered = strings.Join(uncovered, "|")
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

// tools splits a matcher into its tool names; "" is one empty name.
func tools(matcher string) []string {
	if matcher == "" {
		return []string{""}
	}
	return strings.Split(matcher, "|")
}

// covers reports whether a group's matcher, an anchored pattern ("" and "*": all), applies to tool.
func covers(matcher, tool string) bool {
	if tool == "" || matcher == "" || matcher == "*" {
		return true
	}
	re, err := regexp.Compile("^(?:" + matcher + ")$")
	if err != nil {
		return matcher == tool
	}
	return re.MatchString(tool)
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
		case quote != 0:
			if c == quote {
				quote = 0
			} else {
				b.WriteByte(c)
			}
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
		if out[i], err = lookup(d.text, d.root, h); err != nil {
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
		for _, group := range ev.val.elems {
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

// Remove returns data with stopgate's entries taken out where they are still exactly what gate init writes: a group
// of one command of want, the wall's sandbox keys at its values, the rules of deny; a container this leaves empty
// goes too, every other byte stays. A group that runs one of programs but differs from every want is left, and named
// in Left.
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
		for _, g := range m.val.elems {
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
			for i, g := range m.val.elems {
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
		root, _ := parse(text)
		sb := root.get("sandbox")
		if i := memberIndex(sb, k.key); i >= 0 && sb.members[i].val.kind == 'v' && sb.members[i].val.str == fmt.Sprint(k.want) {
			text = prune(cut(text, sb, i, i+1), []string{"sandbox"})
			r.Removed = append(r.Removed, "sandbox."+k.key)
		}
	}
	for _, rule := range deny {
		root, _ := parse(text)
		list := root.get("permissions").get("deny")
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

// spelled reports whether object n's keys are all of keys, as spelled: encoding/json takes "Command" for command, the
// client does not.
func (n *node) spelled(keys ...string) bool {
	return !slices.ContainsFunc(n.list(), func(m member) bool { return !slices.Contains(keys, m.key) })
}

// ownGroup reports whether g is a group gate init wrote for event: a matcher within the hook's, one command of want
// with its type, command and timeout, a status message or onFailure of any text, nothing else.
func ownGroup(text []byte, g *node, event string, want []Hook) (Hook, bool) {
	var own group
	dec := json.NewDecoder(bytes.NewReader(text[g.start:g.end]))
	dec.DisallowUnknownFields()
	if dec.Decode(&own) != nil || len(own.Hooks) != 1 || own.Hooks[0].Type != "command" ||
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

// SameRun reports whether commands a and b are the same: equal, or launchers of the same candidates and arguments,
// whatever their fallback and form (another stopgate version's).
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
	return !slices.ContainsFunc(tools(matcher), func(t string) bool { return !slices.Contains(tools(outer), t) })
}

func memberIndex(n *node, key string) int {
	if n == nil || n.kind != '{' {
		return -1
	}
	return slices.IndexFunc(n.members, func(m member) bool { return m.key == key })
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
	for len(path) > 0 {
		root, _ := parse(text)
		parent := root
		for _, k := range path[:len(path)-1] {
			parent = parent.get(k)
		}
		i := memberIndex(parent, path[len(path)-1])
		if i < 0 {
			return text
		}
		v := parent.members[i].val
		if (v.kind != '[' && v.kind != '{') || v.items() > 0 {
			return text
		}
		text = cut(text, parent, i, i+1)
		path = path[:len(path)-1]
	}
	return text
}
