// Package pattern selects files by gitignore(5) patterns, with git's semantics.
package pattern

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Set is a list of patterns read as the lines of a .gitignore: a selected
// folder selects all under it for good; the last match decides.
type Set struct{ list []pat }

type pat struct {
	segs    []string // split at "/"; "**" spans directories
	negate  bool
	dirOnly bool
}

// Compile checks and compiles pats; an error names the pattern.
func Compile(pats []string) (*Set, error) {
	s := &Set{}
	for _, raw := range pats {
		p, err := compile(raw)
		if err != nil {
			return nil, fmt.Errorf("pattern %q %w", raw, err)
		}
		s.list = append(s.list, p)
	}
	return s, nil
}

// Check says why p is not a valid pattern.
func Check(p string) error {
	_, err := compile(p)
	return err
}

func compile(raw string) (pat, error) {
	s, neg := strings.CutPrefix(raw, "!")
	s, dir := strings.CutSuffix(s, "/")
	p := pat{negate: neg, dirOnly: dir}
	anchored := strings.Contains(s, "/")
	s = strings.TrimPrefix(s, "/")
	if strings.TrimSpace(s) == "" {
		return p, errors.New("selects nothing")
	}
	p.segs = strings.Split(s, "/")
	for i, seg := range p.segs {
		switch seg {
		case "", ".":
			return p, errors.New("has an empty or . segment")
		case "..":
			return p, errors.New("reaches outside the project (..)")
		}
		p.segs[i] = bang(seg)
		if _, err := path.Match(p.segs[i], ""); err != nil {
			return p, fmt.Errorf("is not a valid glob: %w", err)
		}
	}
	if !anchored {
		p.segs = append([]string{"**"}, p.segs...)
	}
	return p, nil
}

// escapeOrClass is an escaped character, or a class up to its "]".
var escapeOrClass = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)\\.|\[[^\]]*`) })

// bang spells git's class negation [!a] as path.Match's [^a].
func bang(seg string) string {
	return escapeOrClass().ReplaceAllStringFunc(seg, func(m string) string {
		if rest, ok := strings.CutPrefix(m, "[!"); ok {
			return "[^" + rest
		}
		return m
	})
}

// Match reports whether the file at the slash path rel is selected.
func (s *Set) Match(rel string) bool {
	segs := strings.Split(rel, "/")
	for n := 1; n < len(segs); n++ {
		if s.last(segs[:n], true) {
			return true // git does not look inside a selected directory
		}
	}
	return s.last(segs, false)
}

// last reports whether the last pattern that matches segs selects it.
func (s *Set) last(segs []string, dir bool) bool {
	for i := len(s.list) - 1; i >= 0; i-- {
		if p := s.list[i]; (dir || !p.dirOnly) && match(p.segs, segs) {
			return !p.negate
		}
	}
	return false
}

// MayEnter reports whether a file under the directory dir could be selected.
func (s *Set) MayEnter(dir string) bool {
	if dir == "." || dir == "" {
		return true
	}
	segs := strings.Split(dir, "/")
	return slices.ContainsFunc(s.list, func(p pat) bool { return !p.negate && enter(p.segs, segs) })
}

// enter reports whether pat matches dir, a parent, or could match below it.
func enter(pat, dir []string) bool {
	for len(pat) > 0 && len(dir) > 0 && pat[0] != "**" {
		if ok, _ := path.Match(pat[0], dir[0]); !ok {
			return false
		}
		pat, dir = pat[1:], dir[1:]
	}
	return true
}

// match matches the pattern segments pat against the path segments segs.
func match(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			if len(pat) == 1 {
				return len(segs) > 0 // a trailing "/**" is everything inside
			}
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
