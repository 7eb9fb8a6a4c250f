package settings

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

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
