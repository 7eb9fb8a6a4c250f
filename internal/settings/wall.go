package settings

import (
	"cmp"
	"fmt"
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

// WallStatus is what one settings file says about the wall.
type WallStatus struct {
	Set      map[string]bool // the wall's keys the file sets ("enabled"); a non-boolean is false
	Line     map[string]int  // where each key of Set is written
	Deny     []string        // permissions.deny
	Excluded []string        // sandbox.excludedCommands, which run outside the sandbox
}

// Against returns "sandbox.KEY is VALUE: WHY" for each key s sets against the wall.
func (s WallStatus) Against() []string {
	var out []string
	for _, a := range (Walls{Files: []WallStatus{s}}).Against() { // the one file's values count
		out = append(out, a.Text)
	}
	return out
}

// InspectWall reads the wall's settings from a settings file.
func InspectWall(data []byte) (WallStatus, error) { return Parse(data).Wall() }

// Wall reads the wall's settings from the file.
func (d *Doc) Wall() (WallStatus, error) {
	if d.err != nil {
		return WallStatus{}, d.err
	}
	text, root := d.text, d.root
	sb, perms := root.get("sandbox"), root.get("permissions")
	deny := perms.get("deny")
	if err := cmp.Or(expect(text, root, '{', "settings", "an object"), expect(text, sb, '{', `"sandbox"`, "an object"),
		expect(text, perms, '{', `"permissions"`, "an object"), expect(text, deny, '[', `"permissions.deny"`, "an array of rules")); err != nil {
		return WallStatus{}, err
	}
	st := WallStatus{Set: map[string]bool{}, Line: map[string]int{}}
	for _, k := range wallKeys {
		if v := sb.get(k.key); v != nil {
			st.Set[k.key] = v.kind == 'v' && v.str == "true"
			st.Line[k.key], _ = position(text, v.start)
		}
	}
	for _, e := range sb.get("excludedCommands").elements() {
		st.Excluded = append(st.Excluded, e.str)
	}
	for _, e := range deny.elements() {
		if e.kind == '"' {
			st.Deny = append(st.Deny, e.str)
		}
	}
	return st, nil
}

// MergeWall returns data with each sandbox key absent and each rule of deny permissions.deny lacks inserted, and
// those; a key set against the wall is the user's decision, left as it is and reported in st.
func MergeWall(data []byte, deny []string) (out []byte, added []string, st WallStatus, err error) {
	if st, err = InspectWall(data); err != nil {
		return nil, nil, st, err
	}
	text := normalize(data)
	for _, k := range wallKeys {
		if _, ok := st.Set[k.key]; ok {
			continue
		}
		root, _ := parse(text)
		text = add(text, root, []string{"sandbox"}, k.key, k.want)
		added = append(added, "sandbox."+k.key)
	}
	for _, rule := range deny {
		if slices.Contains(st.Deny, rule) {
			continue
		}
		root, _ := parse(text)
		text = add(text, root, []string{"permissions", "deny"}, "", rule)
		st.Deny = append(st.Deny, rule)
		added = append(added, rule)
	}
	if len(added) == 0 {
		return data, nil, st, nil
	}
	return text, added, st, nil
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

// Walls is the wall as the client merges its settings files: a later file's key wins, the deny rules and the excluded
// commands add up.
type Walls struct {
	Files    []WallStatus    // each file's own, in order; empty for one not there
	Read     int             // how many files were there
	Value    map[string]bool // each sandbox key's value that counts
	From     map[string]int  // the index in Files of the file it counts from
	Deny     []string
	Excluded []string
}

// ReadWalls reads the wall from the client's settings files in its order, nil for one not there; bad is the index of
// one that does not parse.
func ReadWalls(files []*Doc) (w Walls, bad int, err error) {
	w = Walls{Files: make([]WallStatus, len(files)), Value: map[string]bool{}, From: map[string]int{}}
	for i, d := range files {
		if d == nil {
			continue
		}
		st, err := d.Wall()
		if err != nil {
			return Walls{}, i, err
		}
		w.Files[i] = st
		w.Read++
		w.Deny = append(w.Deny, st.Deny...)
		w.Excluded = append(w.Excluded, st.Excluded...)
		for k, v := range st.Set {
			w.Value[k], w.From[k] = v, i
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
		if v, ok := w.Value[k.key]; !ok || v != k.want {
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
	for _, st := range w.Files {
		for _, k := range wallKeys {
			if v, ok := st.Set[k.key]; ok && v == k.want {
				return true
			}
		}
	}
	return len(w.Lacking(rules)) < len(rules)
}

// Against is a sandbox key set against the wall where its value counts.
type Against struct {
	File, Line int    // the index of its file in Walls.Files, and its line there
	Text       string // "sandbox.KEY is VALUE: WHY"
}

// Against returns the keys set against the wall where the value that counts is.
func (w Walls) Against() []Against {
	var out []Against
	for i, st := range w.Files {
		for _, k := range wallKeys {
			if v, ok := st.Set[k.key]; ok && v != k.want && w.From[k.key] == i {
				out = append(out, Against{File: i, Line: st.Line[k.key], Text: fmt.Sprintf("sandbox.%s is %t: %s", k.key, v, k.why)})
			}
		}
	}
	return out
}

// Unset returns the wall's keys no file sets, as "sandbox.KEY".
func (w Walls) Unset() []string {
	var out []string
	for _, k := range wallKeys {
		if _, ok := w.Value[k.key]; !ok {
			out = append(out, "sandbox."+k.key)
		}
	}
	return out
}

// Lacking returns the rules of rules no file denies.
func (w Walls) Lacking(rules []string) []string {
	return slices.DeleteFunc(slices.Clone(rules), func(r string) bool { return slices.Contains(w.Deny, r) })
}
