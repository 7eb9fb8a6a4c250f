package config

import (
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/project"
)

// A Read is the judgement of a Read of one file: which mappings it arms,
// and through which of their Names.
type Read struct {
	Path    string // as the client gives it: absolute
	Rel     string // Path relative to the root
	Target  string // the mapped name it reached: Rel, or where a symlink leads
	Maps    []*Mapping
	Outside bool // a mapped name, but a symlink leading out of the project
}

// ReadOf returns the unjudged Read of absolute path if it may arm a
// mapping (a .md file inside root): detect asks before loading a config.
func ReadOf(root, path string) (Read, bool) {
	if !strings.HasSuffix(path, ".md") {
		return Read{}, false
	}
	rel, ok := project.Rel(root, path)
	return Read{Path: path, Rel: rel, Target: rel}, ok
}

// MatchRead returns the mappings a Read of absolute path arms.
func (c *Config) MatchRead(path string) ([]*Mapping, error) {
	r, err := c.JudgeRead(path)
	return r.Maps, err
}

// JudgeRead judges a Read of absolute path.
func (c *Config) JudgeRead(path string) (Read, error) {
	r, ok := ReadOf(c.Root, path)
	if !ok {
		return Read{}, nil
	}
	return r, c.Judge(&r)
}

// Judge judges r, from ReadOf: it arms the mappings one of whose Names is
// the file's path, or where a symlink inside the project leads; a mapped
// name that is a symlink out of the project is not the project's prompt.
func (c *Config) Judge(r *Read) error {
	maps, err := c.MatchPath(r.Rel)
	if err != nil {
		return err
	}
	if len(maps) > 0 {
		if !project.Inside(c.Root, r.Path) {
			r.Outside = true
			return nil
		}
		r.Maps = maps
		return nil
	}
	// Not a prompt by name; perhaps by where it leads.
	real, err := filepath.EvalSymlinks(r.Path)
	if err != nil || real == filepath.Clean(r.Path) {
		return nil
	}
	realRoot, err := filepath.EvalSymlinks(c.Root)
	if err != nil {
		realRoot = c.Root
	}
	target, ok := project.Rel(realRoot, real)
	if !ok {
		return nil
	}
	if r.Maps, err = c.MatchPath(target); len(r.Maps) > 0 {
		r.Target = target
	}
	return err
}
