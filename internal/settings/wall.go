package settings

import (
	"fmt"
	"slices"
	"strings"
)

// wallKey is one of Claude Code's sandbox settings that make its OS
// sandbox a wall (docs/security.md).
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
	for _, k := range wallKeys {
		if v, ok := s.Set[k.key]; ok && v != k.want {
			out = append(out, k.against(v))
		}
	}
	return out
}

func (k wallKey) against(v bool) string {
	return fmt.Sprintf("sandbox.%s is %t: %s", k.key, v, k.why)
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
	for _, e := range []error{expect(text, root, '{', "settings", "an object"), expect(text, sb, '{', `"sandbox"`, "an object"),
		expect(text, perms, '{', `"permissions"`, "an object"), expect(text, deny, '[', `"permissions.deny"`, "an array of rules")} {
		if e != nil {
			return WallStatus{}, e
		}
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

// MergeWall returns data with the wall inserted as Merge inserts hooks:
// each sandbox key absent, each rule of deny permissions.deny lacks. A key
// set against the wall is the user's decision, left as it is and reported
// in st. added names what was inserted (none: data unchanged).
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

// DenyRule is Claude Code's rule denying Edit of path, which also feeds
// the sandbox's write policy: "/x" from the project root, "//x" absolute,
// "~/x" under home; a folder's covers what is in it.
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
