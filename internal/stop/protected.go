package stop

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/trust"
)

// trustedBase is the trusted base of the stop's project: what the
// validators' confinement mounts read-only, and its project's part, which
// the gate checks for hard links.
func trustedBase(cfg *config.Config, in *hook.Input) *trust.Base {
	b, _ := trust.For(trust.Project{Root: cfg.Root, Home: os.Getenv("HOME"), File: cfg.File, Config: cfg,
		Transcript: in.TranscriptPath, PluginRoot: os.Getenv("CLAUDE_PLUGIN_ROOT")}) // a parsed config has its runs
	return b
}

// creatable are the protected paths whose appearing during the validators'
// run is theirs: those of the trusted base in the project but the state
// dir, the npm scope included (a package planted there is the gate npm's
// launcher glob runs). The state dir is made by detect, which a subagent
// still running may call meanwhile, and the transcripts by the client.
func creatable(cfg *config.Config, ps []guard.Protected) []string {
	var out []string
	for _, p := range ps {
		path := filepath.FromSlash(p.Path)
		if (!p.Dir || p.Planted) && project.Display(cfg.Root, path) != path {
			out = append(out, path)
		}
	}
	return out
}

// maxLinkWalk bounds how many entries of a protected folder are looked at
// for hard links: a state dir or validators folder holds a few dozen.
const maxLinkWalk = 10000

// linkedReason is the halt of a stop whose protected set has a file with
// another name: a hard link made earlier (ln, cp -l, os.link) writes it
// from anywhere, around the guard and through the validators' read-only
// mounts. "" when there is none.
func linkedReason(cfg *config.Config, set *guard.Set) string {
	var found []string
	for _, p := range set.Paths() {
		n := 0
		filepath.WalkDir(filepath.FromSlash(p.Path), func(path string, d fs.DirEntry, err error) error {
			if n++; err != nil || n > maxLinkWalk {
				return filepath.SkipAll
			}
			if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 && path == filepath.FromSlash(p.Path) {
				if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() {
					if n := links(path, st); n > 1 {
						found = append(found, fmt.Sprintf("%s (%d names)", project.Display(cfg.Root, path), n))
					}
				}
			}
			return nil
		})
	}
	if len(found) == 0 {
		return ""
	}
	return fmt.Sprintf("stopgate halted the session: a protected file has another name (a hard link), which writes it around the guard and the validators' confinement: %s. "+
		"The agent must not link its own checks. Find the other names (find / -xdev -samefile FILE), remove them, then stop again. "+
		"The pending entries are kept in %s.", strings.Join(found, ", "), cfg.Settings.StateDir)
}

// appearedReason is the halt of a stop whose validators created a
// protected path that did not exist (a .claude/settings.local.json that
// disables the hooks): it could not be mounted read-only, being absent.
func appearedReason(cfg *config.Config, paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	var names []string
	for _, p := range paths {
		names = append(names, project.Display(cfg.Root, p))
	}
	return fmt.Sprintf("stopgate halted the session: a validator created %s, which is protected and did not exist before it ran: "+
		"the code a validator runs must not change stopgate's checks or hooks. Look at it, remove it, then stop again. "+
		"The pending entries are kept in %s.", strings.Join(names, ", "), cfg.Settings.StateDir)
}

// dotEnvReason is the halt of a Gemini CLI or Qwen Code stop while a .env
// file the client loads sets a variable of the trusted base's environment
// (trust.DotEnvHookEnv): the client hands it to the next session's hooks,
// so an LD_PRELOAD or PATH the agent wrote there would choose what the
// gate and its validators run. "" when there is none, or another client.
func dotEnvReason(cfg *config.Config, in *hook.Input) string {
	if in.Client == nil {
		return ""
	}
	var found []string
	for _, f := range trust.DotEnvHookEnv(in.Client.Name(), cfg.Root, os.Getenv("HOME")) {
		found = append(found, f.Show+" sets "+strings.Join(f.Env, ", "))
	}
	if len(found) == 0 {
		return ""
	}
	return fmt.Sprintf("stopgate halted the session: %s, which the client loads into its environment and hands every hook and validator: "+
		"it would choose the programs they run. The agent must not set them. Remove them from the file (or ask the user to set them in the shell "+
		"that starts the client), then stop again. The pending entries are kept in %s.", strings.Join(found, "; "), cfg.Settings.StateDir)
}
