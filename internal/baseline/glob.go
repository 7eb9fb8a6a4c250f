package baseline

import (
	"errors"
	"path"
	"strings"
)

// Glob is a gitignore-style pattern over slash paths relative to the
// project root: * and ? within a segment, ** for any number of
// directories, a pattern without a slash matching a file's name at any
// depth, a trailing slash for everything under a directory.
type Glob struct {
	Pattern string
	segs    []string
}

// CompileGlob checks and compiles a pattern.
func CompileGlob(p string) (Glob, error) {
	g := Glob{Pattern: p}
	s := strings.TrimSpace(p)
	switch {
	case s == "":
		return g, errors.New("is empty")
	case strings.HasPrefix(s, "!"):
		return g, errors.New("negation (!) is not supported")
	}
	anchored := strings.HasPrefix(s, "/")
	s = strings.TrimPrefix(s, "/")
	if strings.HasSuffix(s, "/") {
		s += "**"
	}
	segs := strings.Split(s, "/")
	for _, seg := range segs {
		switch {
		case seg == "" || seg == ".":
			return g, errors.New("has an empty or . segment")
		case seg == "..":
			return g, errors.New("reaches outside the project (..)")
		case seg == "**":
			continue
		}
		if _, err := path.Match(seg, ""); err != nil {
			return g, errors.New("is not a valid glob: bad [class] or trailing \\")
		}
	}
	if !anchored && len(segs) == 1 {
		segs = []string{"**", segs[0]} // a name matches at any depth
	}
	g.segs = segs
	return g, nil
}

// Match reports whether rel, a slash path relative to the root, matches.
func (g Glob) Match(rel string) bool { return match(g.segs, strings.Split(rel, "/")) }

// mayEnter reports whether a file under the directory rel could match:
// the walk skips the directories none could.
func (g Glob) mayEnter(rel string) bool {
	if rel == "." || rel == "" {
		return true
	}
	return enter(g.segs, strings.Split(rel, "/"))
}

func match(p, s []string) bool {
	if len(p) == 0 {
		return len(s) == 0
	}
	if p[0] == "**" {
		for i := 0; i <= len(s); i++ {
			if match(p[1:], s[i:]) {
				return true
			}
		}
		return false
	}
	if len(s) == 0 {
		return false
	}
	ok, _ := path.Match(p[0], s[0])
	return ok && match(p[1:], s[1:])
}

func enter(p, s []string) bool {
	switch {
	case len(s) == 0:
		return true
	case len(p) == 0:
		return false
	case p[0] == "**":
		return true
	}
	ok, _ := path.Match(p[0], s[0])
	return ok && enter(p[1:], s[1:])
}
