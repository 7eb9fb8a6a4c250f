package gate

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/dialect"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/project"
)

// The second wall on clients other than Claude Code: what each client's own
// sandbox or permissions offer against a write to the protected set, found
// on the real binaries (docs/security.md, "The second wall per client").
// Codex offers a permission profile whose project paths are read-only
// inside a writable workspace; OpenCode, deny rules for its edit tools.

// clientWall is one client's second wall.
type clientWall struct {
	// write turns the wall on in the client's project config; nil: the
	// client offers none that a project can turn on.
	write func(env *cli.Env, root string, set *guard.Set) error
	// check says whether the wall is up; nil with write.
	check func(env *cli.Env, ws workspace, set *guard.Set) []finding
	// remove plans taking the wall out again (gate uninstall --client).
	remove func(env *cli.Env, root string) (undo, error)
	// left is what the guard alone stands against, wall up or not.
	left string
}

var clientWalls = map[string]clientWall{
	dialect.Codex: {write: writeCodexWall, check: codexWallFindings, remove: undoCodexWall,
		left: "the wall is Codex's own sandbox for shell commands (bubblewrap): with the permission profile up, the protected set is read-only to every command and to apply_patch; a command or patch the user approves outside the sandbox, and a session started with --sandbox, --dangerously-bypass-approvals-and-sandbox or a sandbox_mode anywhere in Codex's config are the guard's alone"},
	dialect.Gemini:  {left: "no wall gate init can turn on: Gemini CLI's sandbox runs the whole session in docker or podman (or Seatbelt on macOS) and is chosen by the user (--sandbox, GEMINI_SANDBOX); the guard alone refuses a write to the protected set"},
	dialect.Copilot: {left: "no wall gate init can turn on: Copilot CLI's command sandbox (MXC, bubblewrap plus slirp4netns on Linux) is switched on and given its paths in the user's own settings or with --sandbox, not in the project; the guard alone refuses a write to the protected set"},
	dialect.OpenCode: {write: writeOpenCodeWall, check: opencodeWallFindings, remove: undoOpenCodeWall,
		left: "the wall is OpenCode's permission rules in opencode.json: with them up, the write, edit and patch tools are refused the protected set; OpenCode has no sandbox for the shell, so every bash command, and a rule the user answers \"allow\" or edits away, are the guard's alone (the plugin's tool.execute.before)"},
}

// clientSet returns the protected set of the project at root, with the
// config file in use, as the guard computes it.
func clientSet(env *cli.Env, root, file string) *guard.Set {
	cfg, _, _ := config.Inspect(file, root, config.FileOnly)
	set, _ := guard.ProjectSet(root, env.Getenv("HOME"), file, "", nil, cfg)
	return set
}

// initClientWall turns on the client's second wall where it has one, and
// says what is left to the guard alone.
func initClientWall(env *cli.Env, c *agentClient, root string) error {
	w := clientWalls[c.name]
	if w.write != nil {
		set := clientSet(env, root, filepath.Join(root, project.ConfigName)) // init writes the project's own
		if set.Empty() {
			fmt.Fprintf(env.Stdout, "%s: no wall: [settings] protect = [] protects nothing\n", c.title)
			return nil
		}
		if err := w.write(env, root, set); err != nil {
			return err
		}
	}
	return nil
}

// clientWallFindings says whether the client's second wall is up.
func clientWallFindings(env *cli.Env, ws workspace, c *agentClient) []finding {
	w := clientWalls[c.name]
	if w.check == nil {
		return nil
	}
	set := clientSet(env, ws.root, ws.file) // gate check --config
	if set.Empty() {
		return nil
	}
	return w.check(env, ws, set)
}

// clientWallNote is what `gate check` prints about the client's wall.
func clientWallNote(c *agentClient) string {
	return "wall: " + clientWalls[c.name].left
}

// readIfThere reads path; a missing file is empty.
func readIfThere(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	return data, err
}
