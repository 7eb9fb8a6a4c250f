package config

import (
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/project"
)

// MatchRead returns the mappings a Read of path (absolute, as the client
// gives it) arms: a mapped prompt file inside the project, named by its own
// path, or reached through a symlink inside the project that leads to one
// (docs/joke.md → src/prompts/joke.md: the agent read the prompt all the
// same). A prompt path that is itself a symlink leading out of the project
// is not the project's prompt. Detect and the gate's transcript
// reconciliation both judge reads with it, so they cannot disagree.
func (c *Compiled) MatchRead(path string) ([]*Mapping, error) {
	if !strings.HasSuffix(path, ".md") {
		return nil, nil
	}
	rel, ok := project.Rel(c.Root, path)
	if !ok {
		return nil, nil
	}
	maps, err := c.MatchPath(rel)
	if err != nil || len(maps) > 0 {
		if len(maps) > 0 && !project.Inside(c.Root, path) {
			return nil, nil
		}
		return maps, err
	}
	// Not a prompt by name; perhaps by where it leads. Only symlinks cost
	// more than this one resolve.
	real, err := filepath.EvalSymlinks(path)
	if err != nil || real == filepath.Clean(path) {
		return nil, nil
	}
	realRoot, err := filepath.EvalSymlinks(c.Root)
	if err != nil {
		realRoot = c.Root
	}
	if rel, ok = project.Rel(realRoot, real); !ok {
		return nil, nil
	}
	return c.MatchPath(rel)
}
