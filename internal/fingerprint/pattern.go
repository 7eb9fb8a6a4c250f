package fingerprint

import (
	"fmt"
	"path"
	"strings"
)

// Patterns select files of the tree the way .gitignore lines do: a
// pattern without a slash (other than a trailing one) matches a name at
// any depth, one with a slash is anchored at the root, "**" spans any
// number of directories, a trailing "/" matches directories only, a
// pattern that matches a directory selects every file in it, and "!"
// takes back what an earlier pattern selected. The last pattern that
// matches a file decides.
type Patterns struct {
	list []pattern
}

type pattern struct {
	segs    []string // split at "/"; "**" spans directories
	negate  bool
	dirOnly bool
}

// Compile checks and compiles pats. A pattern that is empty, or whose
// segments path.Match refuses, is an error naming it.
func Compile(pats []string) (*Patterns, error) {
	ps := &Patterns{}
	for _, raw := range pats {
		p, err := compile(raw)
		if err != nil {
			return nil, err
		}
		ps.list = append(ps.list, p)
	}
	return ps, nil
}

func compile(raw string) (pattern, error) {
	s := raw
	var p pattern
	if strings.HasPrefix(s, "!") {
		p.negate, s = true, s[1:]
	}
	if strings.HasSuffix(s, "/") {
		p.dirOnly, s = true, strings.TrimRight(s, "/")
	}
	anchored := strings.Contains(s, "/")
	s = strings.TrimPrefix(s, "/")
	if strings.TrimSpace(s) == "" {
		return p, fmt.Errorf("pattern %q selects nothing", raw)
	}
	p.segs = strings.Split(s, "/")
	if !anchored {
		p.segs = append([]string{"**"}, p.segs...)
	}
	for _, seg := range p.segs {
		if seg == "" {
			return p, fmt.Errorf("pattern %q has an empty path segment", raw)
		}
		if _, err := path.Match(seg, ""); err != nil {
			return p, fmt.Errorf("pattern %q is not a valid glob: %w", raw, err)
		}
	}
	return p, nil
}

// Match reports whether the file at rel (slash-separated, relative to the
// root) is selected.
func (ps *Patterns) Match(rel string) bool {
	segs := strings.Split(rel, "/")
	in := false
	for _, p := range ps.list {
		if p.negate == in && p.matches(segs) {
			in = !p.negate
		}
	}
	return in
}

// matches reports whether p matches the file segs or a directory it lies in.
func (p pattern) matches(segs []string) bool {
	last := len(segs)
	if p.dirOnly {
		last-- // the file itself is no directory
	}
	for n := last; n >= 1; n-- {
		if match(p.segs, segs[:n]) {
			return true
		}
	}
	return false
}

// match matches the pattern segments pat against the path segments segs.
func match(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for i := 0; i <= len(segs); i++ {
				if match(pat[1:], segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}
