package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
)

// OpenCode's wall is its permission rules in the project's opencode.json:
// an edit rule set to "deny" refuses the write, edit and patch tools
// before the plugin sees the call. OpenCode matches an edit rule against
// the file's path relative to the worktree: the git repository's top, or
// "/" outside git (observed on 1.18.33: "mappings.toml" did not match
// outside git, the path from "/" did). Each protected path gets both
// spellings, literal, so a file of the same name elsewhere is not denied.
const opencodeConfig = "opencode.json"

// opencodePatterns returns the edit patterns for the protected set.
func opencodePatterns(root string, set *guard.Set) []string {
	tops := []string{"/"}
	if top := gitTop(root); top != "" {
		tops = append(tops, top)
	}
	var out []string
	for _, p := range set.Paths() {
		st, err := os.Stat(filepath.FromSlash(p.Path))
		dir := (err == nil && st.IsDir()) || p.Dir
		for _, top := range tops {
			r, err := filepath.Rel(top, filepath.FromSlash(p.Path))
			if err != nil {
				continue
			}
			r = filepath.ToSlash(r)
			if dir {
				r += "/*"
			}
			if !slices.Contains(out, r) {
				out = append(out, r)
			}
		}
	}
	return out
}

// gitTop returns the folder at or above dir holding .git, as OpenCode
// takes for the worktree; "" outside git.
func gitTop(dir string) string {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

// writeOpenCodeWall merges the deny rules into opencode.json.
func writeOpenCodeWall(env *cli.Env, root string, set *guard.Set) error {
	path := filepath.Join(root, opencodeConfig)
	data, err := readIfThere(path)
	if err != nil {
		return err
	}
	want := opencodePatterns(root, set)
	out, added, note, err := settings.MergeEditDeny(data, want)
	if err != nil {
		return settingsError(opencodeConfig, err)
	}
	if note != "" {
		fmt.Fprintf(env.Stdout, "note: %s: %s; left as it is: the guard alone stands there\n", opencodeConfig, note)
	}
	switch {
	case note != "" && len(added) == 0:
	case len(added) == 0:
		fmt.Fprintf(env.Stdout, "%s: OpenCode's permission wall is already there (%s)\n", opencodeConfig, plural(len(want), "edit deny rule", "edit deny rules"))
	default:
		if err := settings.WriteFile(path, out); err != nil {
			return fmt.Errorf("writing %s: %w", opencodeConfig, err)
		}
		fmt.Fprintf(env.Stdout, "%s: OpenCode's permission wall: added %s\n", opencodeConfig, plural(len(added), "edit deny rule", "edit deny rules"))
		for _, a := range added {
			fmt.Fprintf(env.Stdout, "  + permission.edit %s = \"deny\"\n", settings.Quote(a))
		}
	}
	return nil
}

// undoOpenCodeWall takes out of opencode.json the deny rules init added
// there (settings.RemoveEditDeny), and the file when nothing else is left.
func undoOpenCodeWall(env *cli.Env, root string) (undo, error) {
	return undoFile(root, opencodeConfig, func(u *undo, data []byte) error {
		out, removed, err := settings.RemoveEditDeny(data, opencodePatterns(root, projectSet(env, root, filepath.Join(root, project.ConfigName), nil)))
		if err != nil {
			return err
		}
		u.out = out
		for _, p := range removed {
			u.r.Removed = append(u.r.Removed, "permission.edit "+settings.Quote(p))
		}
		u.gone = len(removed) > 0 && strings.Join(strings.Fields(string(u.out)), "") == "{}" // an empty object is no config
		return nil
	})
}

// opencodeReadable refuses an opencode.json the rules could not be merged
// into, as writeOpenCodeWall would.
func opencodeReadable(root string) error {
	data, err := readIfThere(filepath.Join(root, opencodeConfig))
	if err != nil {
		return err
	}
	if _, _, _, err := settings.MergeEditDeny(data, nil); err != nil {
		return settingsError(opencodeConfig, err)
	}
	return nil
}

// opencodeWallFindings says whether opencode.json denies every protected
// path to OpenCode's edit tools.
func opencodeWallFindings(env *cli.Env, ws workspace, set *guard.Set) []finding {
	data, err := readIfThere(filepath.Join(ws.root, opencodeConfig))
	if err != nil {
		return []finding{{loc: opencodeConfig, msg: err.Error()}}
	}
	open, err := settings.EditDenied(data, opencodePatterns(ws.root, set))
	if err != nil {
		return []finding{{loc: opencodeConfig, msg: "not JSON: " + err.Error(), hint: "fix it by hand, then run gate init --client opencode again"}}
	}
	if len(open) == 0 {
		return nil
	}
	return []finding{{loc: opencodeConfig, warning: true,
		msg:  "permission.edit does not deny " + strings.Join(open, ", ") + ": OpenCode's wall is down there, the guard alone refuses the write tools",
		hint: `"gate init --client opencode" adds the deny rules and keeps the rest of the file`}}
}
