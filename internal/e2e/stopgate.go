package e2e

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/example"
	"github.com/stopgate/stopgate/internal/settings"
)

// StateDir is where the example's mappings.toml keeps the queue (settings.state_dir).
const StateDir = "tmp/validation"

// NewStopgateProject returns a Project holding a copy of the repository's example
// project, the stopgate commands built from source in its bin/ (behind the Wrapper that
// captures their inputs), and the hooks registered as a user registers them: by running
// `gate init` in it, which writes .claude/settings.json (InitOutput holds what it said).
func NewStopgateProject(t testing.TB) *Project {
	t.Helper()
	p := NewProject(t)
	root := Root(t)
	if err := example.Copy(root, p.Path(".")); err != nil {
		t.Fatalf("e2e: copying the example project: %v", err)
	}
	// bin/ holds the commands as a user installs them, each a link to the capturing
	// wrapper that runs the build's own.
	built := Stopgate(t)
	des, err := os.ReadDir(built)
	if err != nil {
		t.Fatalf("e2e: %v", err)
	}
	p.wrapped = map[string]bool{}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
		p.wrapped[de.Name()] = true
	}
	p.capture(built, names)

	// The real gate, not bin/gate: the wrapper is for hook input.
	cmd := exec.Command(filepath.Join(built, "gate"), "init")
	cmd.Dir = p.Dir
	cmd.Env = p.env("http://127.0.0.1:9") // no client runs: the URL is never used
	out, err := cmd.CombinedOutput()
	p.InitOutput = string(out)
	if err != nil || !strings.Contains(p.InitOutput, ".claude/settings.json: registered") {
		t.Fatalf("e2e: gate init: %v\n%s", err, out)
	}
	return p
}

// Unregister removes from .claude/settings.json every hook of event whose command runs
// program (such as "detect"), as a user editing the file would.
func (p *Project) Unregister(event, program string) {
	p.t.Helper()
	var file map[string]any
	if err := json.Unmarshal([]byte(p.ReadFile(".claude/settings.json")), &file); err != nil {
		p.t.Fatalf("e2e: .claude/settings.json: %v", err)
	}
	hooks, _ := file["hooks"].(map[string]any)
	groups, _ := hooks[event].([]any)
	var keep []any
	removed := 0
	for _, g := range groups {
		group, _ := g.(map[string]any)
		cmds, _ := group["hooks"].([]any)
		var left []any
		for _, c := range cmds {
			command, _ := c.(map[string]any)["command"].(string)
			if settings.Program(command) == program {
				removed++
				continue
			}
			left = append(left, c)
		}
		if len(left) > 0 {
			group["hooks"] = left
			keep = append(keep, group)
		}
	}
	if removed == 0 {
		p.t.Fatalf("e2e: no %s hook runs %s", event, program)
	}
	if len(keep) == 0 {
		delete(hooks, event)
	} else {
		hooks[event] = keep
	}
	data, err := json.MarshalIndent(file, "", "  ")
	if err != nil {
		p.t.Fatalf("e2e: %v", err)
	}
	p.WriteFile(".claude/settings.json", string(data)+"\n")
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
