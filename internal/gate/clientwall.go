package gate

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/project"
)

// The second wall on clients other than Claude Code: what each client's own
// sandbox or permissions offer against a write to the protected set, found
// on the real binaries (docs/security.md, "The second wall per client").
// Codex offers a permission profile whose project paths are read-only
// inside a writable workspace; OpenCode, deny rules for its edit tools.

// initClientWall turns on the client's second wall where it has one.
func initClientWall(env *cli.Env, c *agentClient, root string) error {
	if c.wallOn == nil {
		return nil
	}
	set := projectSet(env, root, filepath.Join(root, project.ConfigName), nil) // init writes the project's own
	if set.Empty() {
		fmt.Fprintf(env.Stdout, "%s: no wall: [settings] protect = [] protects nothing\n", c.Title)
		return nil
	}
	return c.wallOn(env, root, set)
}

// clientWallFindings says whether the client's second wall is up.
func clientWallFindings(env *cli.Env, ws workspace, c *agentClient) []finding {
	if c.wallUp == nil {
		return nil
	}
	set := projectSet(env, ws.root, ws.file, nil) // gate check --config
	if set.Empty() {
		return nil
	}
	return c.wallUp(env, ws, set)
}

// readIfThere reads path; a missing file is empty.
func readIfThere(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	return data, err
}
