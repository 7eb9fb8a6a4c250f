package gate

import (
	"fmt"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/project"
)

// initClientWall turns on the client's second wall where it has one
// (client.Wall).
func initClientWall(env *cli.Env, c *client.Client, root string) error {
	if c.Wall == nil {
		return nil
	}
	set := projectSet(env, root, filepath.Join(root, project.ConfigName), nil) // init writes the project's own
	if set.Empty() {
		fmt.Fprintf(env.Stdout, "%s: no wall: [settings] protect = [] protects nothing\n", c.Title)
		return nil
	}
	return c.Wall.Up(env.Stdout, root, wallPaths(set))
}

// clientWallFindings says whether the client's second wall is up.
func clientWallFindings(env *cli.Env, ws workspace, c *client.Client) []finding {
	if c.Wall == nil {
		return nil
	}
	set := projectSet(env, ws.root, ws.file, nil) // gate check --config
	if set.Empty() {
		return nil
	}
	var out []finding
	for _, f := range c.Wall.Check(env.Getenv, ws.root, wallPaths(set)) {
		out = append(out, finding{loc: f.Loc, warning: f.Warning, msg: f.Msg, hint: f.Hint})
	}
	return out
}

// undoClientWall plans taking the client's second wall out of its config
// (gate uninstall --client).
func undoClientWall(env *cli.Env, c *client.Client, root string) (undo, error) {
	return undoFile(root, c.Wall.File(), func(u *undo, data []byte) (err error) {
		paths := wallPaths(projectSet(env, root, filepath.Join(root, project.ConfigName), nil))
		u.out, u.r, u.gone, err = c.Wall.Remove(data, root, paths)
		return err
	})
}

// wallPaths are the protected paths of set as a client's wall takes them.
func wallPaths(set *guard.Set) []client.Path {
	var out []client.Path
	for _, p := range set.Paths() {
		out = append(out, client.Path{Path: p.Path, Show: p.Show, Dir: p.Dir})
	}
	return out
}
