package config

import (
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/project"
)

// A Read is the judgement of a Read of one file: which mappings it arms,
// and through which of their Names.
type Read struct {
	Rel     string // the path read, relative to the root; "" when outside it
	Target  string // the mapped name it reached: Rel, or where a symlink leads
	Maps    []*Mapping
	Outside bool // a mapped name, but a symlink leading out of the project
}

// MatchRead returns the mappings a Read of path (absolute, as the client
// gives it) arms; see JudgeRead.
func (c *Config) MatchRead(path string) ([]*Mapping, error) {
	r, err := c.JudgeRead(path)
	return r.Maps, err
}

// JudgeRead judges a Read of path (absolute, as the client gives it): it
// arms the mappings that have among their Names the file's own path
// inside the project, or the path a symlink inside the project leads to
// (docs/joke.md → src/prompts/joke.md: the agent read the prompt all the
// same). A mapped name that is itself a symlink leading out of the
// project is not the project's prompt. Detect, the gate's transcript
// reconciliation, gate explain and gate run all judge reads with it, so
// they cannot disagree.
func (c *Config) JudgeRead(path string) (Read, error) {
	var r Read
	if !strings.HasSuffix(path, ".md") {
		return r, nil
	}
	rel, ok := project.Rel(c.Root, path)
	if !ok {
		return r, nil
	}
	r.Rel, r.Target = rel, rel
	maps, err := c.MatchPath(rel)
	if err != nil {
		return r, err
	}
	if len(maps) > 0 {
		if !project.Inside(c.Root, path) {
			r.Outside = true
			return r, nil
		}
		r.Maps = maps
		return r, nil
	}
	// Not a prompt by name; perhaps by where it leads. Only symlinks cost
	// more than this one resolve.
	real, err := filepath.EvalSymlinks(path)
	if err != nil || real == filepath.Clean(path) {
		return r, nil
	}
	realRoot, err := filepath.EvalSymlinks(c.Root)
	if err != nil {
		realRoot = c.Root
	}
	target, ok := project.Rel(realRoot, real)
	if !ok {
		return r, nil
	}
	if r.Maps, err = c.MatchPath(target); len(r.Maps) > 0 {
		r.Target = target
	}
	return r, err
}
