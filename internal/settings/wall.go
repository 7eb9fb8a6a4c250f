package settings

import (
	"bytes"
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

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

// Walls is the wall as the client merges its settings files: a later file's key wins, the deny rules and the excluded
// commands add up.
type Walls struct {
	Read     int       // how many files were there
	set      []wallSet // the wall's keys the files set, in file order
	Deny     []string  // permissions.deny
	Excluded []string  // sandbox.excludedCommands, which run outside the sandbox
}

// wallSet is one of the wall's keys as a file sets it; a non-boolean is false.
type wallSet struct {
	file, line int
	wallKey
	value bool
}

// Value returns the value of key that counts; false when unset.
func (w Walls) Value(key string) bool {
	i := w.counts(key)
	return i >= 0 && w.set[i].value
}

// counts returns the index in w.set of the value of key that counts; -1: unset.
func (w Walls) counts(key string) int {
	for i := len(w.set) - 1; i >= 0; i-- {
		if w.set[i].key == key {
			return i
		}
	}
	return -1
}

// Wall reads the wall's settings from the file.
func (d *Doc) Wall() (Walls, error) {
	if d.err != nil {
		return Walls{}, d.err
	}
	text, root := d.text, d.root
	sb, perms := root.get("sandbox"), root.get("permissions")
	deny := perms.get("deny")
	if err := cmp.Or(expect(text, root, '{', "settings", "an object"), expect(text, sb, '{', `"sandbox"`, "an object"),
		expect(text, perms, '{', `"permissions"`, "an object"), expect(text, deny, '[', `"permissions.deny"`, "an array of rules")); err != nil {
		return Walls{}, err
	}
	w := Walls{Read: 1}
	for _, k := range wallKeys {
		if v := sb.get(k.key); v != nil {
			line, _ := position(text, v.start)
			w.set = append(w.set, wallSet{line: line, wallKey: k, value: v.kind == 'v' && v.str == "true"})
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
	return w, nil
}

// MergeWall returns data with each sandbox key absent and each rule of deny permissions.deny lacks inserted, and
// those; a key set against the wall is the user's decision, left as it is and reported in w.
func MergeWall(data []byte, deny []string) (out []byte, added []string, w Walls, err error) {
	if w, err = Parse(data).Wall(); err != nil {
		return nil, nil, w, err
	}
	text := data // add normalizes it: unchanged when nothing is added
	for _, k := range wallKeys {
		if w.counts(k.key) < 0 {
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
	switch {
	case within(path, root):
		spelled = strings.TrimPrefix(path, strings.TrimSuffix(root, "/"))
	case home != "" && within(path, home):
		spelled = "~" + strings.TrimPrefix(path, strings.TrimSuffix(home, "/"))
	}
	if dir {
		spelled = strings.TrimSuffix(spelled, "/") + "/**"
	}
	return "Edit(" + spelled + ")"
}

// within reports whether path is below dir (slash-separated, clean).
func within(path, dir string) bool {
	dir = strings.TrimSuffix(dir, "/")
	return dir != "" && strings.HasPrefix(path, dir+"/")
}

// ReadWalls reads the wall from the client's settings files in its order, nil for one not there; bad is the index of
// one that does not parse.
func ReadWalls(files []*Doc) (w Walls, bad int, err error) {
	for i, d := range files {
		if d == nil {
			continue
		}
		one, err := d.Wall()
		if err != nil {
			return Walls{}, i, err
		}
		for _, s := range one.set {
			s.file = i
			w.set = append(w.set, s)
		}
		w.Read++
		w.Deny = append(w.Deny, one.Deny...)
		w.Excluded = append(w.Excluded, one.Excluded...)
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
		if i := w.counts(k.key); i < 0 || w.set[i].value != k.want {
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
func (w Walls) Present(rules []string) bool {
	return slices.ContainsFunc(w.set, func(s wallSet) bool { return s.value == s.want }) || len(w.Lacking(rules)) < len(rules)
}

// Against is a sandbox key set against the wall where its value counts.
type Against struct {
	File, Line int    // the index of its file in the files read, and its line there
	Text       string // "sandbox.KEY is VALUE: WHY"
}

// Against returns the keys set against the wall where the value that counts is.
func (w Walls) Against() []Against {
	var out []Against
	for i, s := range w.set {
		if s.value != s.want && w.counts(s.key) == i {
			out = append(out, Against{File: s.file, Line: s.line, Text: fmt.Sprintf("sandbox.%s is %t: %s", s.key, s.value, s.why)})
		}
	}
	return out
}

// Unset returns the wall's keys no file sets, as "sandbox.KEY".
func (w Walls) Unset() []string {
	var out []string
	for _, k := range wallKeys {
		if w.counts(k.key) < 0 {
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
