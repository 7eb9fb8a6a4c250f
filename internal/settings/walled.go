package settings

import "slices"

// Walls is the wall as the client merges its settings files: a later
// file's key wins, the deny rules and the excluded commands add up.
type Walls struct {
	Files    []WallStatus    // each file's own, in order; empty for one not there
	Read     int             // how many files were there
	Value    map[string]bool // each sandbox key's value that counts
	From     map[string]int  // the index in Files of the file it counts from
	Deny     []string
	Excluded []string
}

// ReadWalls reads the wall from the client's settings files in the order
// it reads them, nil for one not there; bad is the index of one that does
// not parse.
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

// Walled reports whether the settings files (as ReadWalls) wall off what
// rule denies from the agent's writes: every key as the wall wants it, no
// command excluded, and rule denied; why says what is missing.
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
			return false, "sandbox." + k.key + " is not " + map[bool]string{true: "true", false: "false"}[k.want]
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

// Present reports whether any part of the wall is there: a sandbox key set
// as gate init writes it, or a rule of rules (--no-wall leaves none).
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
				out = append(out, Against{File: i, Line: st.Line[k.key], Text: k.against(v)})
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
