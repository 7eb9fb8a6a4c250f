package e2e

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// exampleFiles are the parts of the repository's example project a stopgate scenario
// starts from, relative to the module root.
var exampleFiles = []string{"mappings.toml", "src/prompts", ".claude/commands", "validators"}

// StateDir is where the example's mappings.toml keeps the queue (settings.state_dir).
const StateDir = "tmp/validation"

// NewStopgateProject returns a Project holding a copy of the repository's example
// project, the stopgate commands built from source in its bin/, and the hooks
// registered in .claude/settings.json as a user would: detect on PostToolUse of Read,
// UserPromptExpansion and UserPromptSubmit; gate on Stop and SubagentStop.
func NewStopgateProject(t testing.TB) *Project {
	t.Helper()
	p := NewProject(t)
	root := Root(t)
	for _, rel := range exampleFiles {
		if err := copyDir(p.Path(rel), filepath.Join(root, filepath.FromSlash(rel))); err != nil {
			t.Fatalf("e2e: copying the example project: %v", err)
		}
	}
	if err := copyDir(p.Path("bin"), Stopgate(t)); err != nil {
		t.Fatalf("e2e: copying the stopgate commands: %v", err)
	}
	detect := `"$CLAUDE_PROJECT_DIR"/bin/detect`
	gate := `"$CLAUDE_PROJECT_DIR"/bin/gate`
	p.Hook("PostToolUse", "Read", detect)
	p.Hook("UserPromptExpansion", "", detect)
	p.Hook("UserPromptSubmit", "", detect)
	p.Hook("Stop", "", gate)
	p.Hook("SubagentStop", "", gate)
	return p
}

// Pending returns the queue's pending entries, as paths under StateDir/sessions
// ("SESSION/main/joke.json", "SESSION/agent-ID/joke.json"), sorted.
func (p *Project) Pending() []string {
	p.t.Helper()
	sessions := p.Path(StateDir + "/sessions")
	var out []string
	err := filepath.WalkDir(sessions, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".json") {
			rel, _ := filepath.Rel(sessions, path)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		p.t.Fatalf("e2e: reading the queue: %v", err)
	}
	return out
}
