package settings

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
)

// EditAction returns what opencode.json's permission.edit decides for path (from the worktree): the last matching
// rule's action, "" if none; a string permission or edit is the action for every path (OpenCode 1.18.33).
func EditAction(data []byte, path string) (string, error) {
	_, root, err := parseObject(data, "opencode.json")
	if err != nil {
		return "", err
	}
	perm := root.get("permission")
	edit := perm.get("edit")
	for _, n := range []*node{perm, edit} {
		if n != nil && n.kind == '"' {
			return n.str, nil
		}
	}
	// A key written twice keeps its first place, as in JavaScript, and its last value.
	action := ""
	for i, m := range edit.list() {
		first := !slices.ContainsFunc(edit.members[:i], func(o member) bool { return o.key == m.key })
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
	norm, n, err := parseObject(data, "opencode.json")
	if err != nil {
		return nil, nil, "", err
	}
	for _, k := range [][3]string{{"permission", "permission", "tool"}, {"edit", "permission.edit", "file"}} {
		if n = n.get(k[0]); n != nil && n.kind == '"' {
			return data, nil, Quote(k[1]) + " is " + Quote(n.str) + ", one action for every " + k[2], nil
		} else if err := expect(norm, n, '{', Quote(k[1]), "an object or an action"); err != nil {
			return nil, nil, "", err
		}
	}
	var overridden []string
	text := data // add normalizes it: unchanged when nothing is added
	for _, p := range patterns {
		if a, _ := EditAction(text, probe(p)); a == "deny" {
			continue
		}
		if root, _ := parse(text); root.get("permission").get("edit").get(p) != nil {
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
	root, _ := parse(text)
	edit := root.get("permission").get("edit")
	for i := range edit.list() {
		run := keys(edit)[i:]
		if !inOrder(run, patterns) || slices.ContainsFunc(edit.members[i:], func(m member) bool { return m.val.text() != "deny" }) {
			continue
		}
		stripped := cut(text, edit, i, len(edit.members))
		for _, cand := range [][]byte{prune(stripped, []string{"permission", "edit"}), stripped} {
			if back, added, _, err := MergeEditDeny(cand, run); err == nil && len(added) == len(run) && bytes.Equal(back, text) {
				return cand, run, nil
			}
		}
	}
	return data, nil, nil
}

// inOrder reports whether keys appear in patterns in the same order.
func inOrder(keys, patterns []string) bool {
	j := 0
	for _, p := range patterns {
		if j < len(keys) && keys[j] == p {
			j++
		}
	}
	return j == len(keys)
}
