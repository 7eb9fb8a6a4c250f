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
	"github.com/stopgate/stopgate/internal/validator"
)

// trustedBase is the stop's trusted base: what confinement mounts read-only, checked for hard links.
func trustedBase(cfg *config.Config, in *hook.Input) *trust.Base {
	b, _ := trust.For(trust.Project{Root: cfg.Root, Home: os.Getenv("HOME"), File: cfg.File, Config: cfg,
		Transcript: in.TranscriptPath, PluginRoot: os.Getenv("CLAUDE_PLUGIN_ROOT")}) // a parsed config has its runs
	return b
}

// creatable are the protected paths in the project a validator must not create (not the state dir).
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

// maxLinkWalk bounds the entries of a protected folder looked at for hard links.
const maxLinkWalk = 10000

// linkedReason halts on a protected file with another name, which writes it around the guard ("": none).
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
	return keptHalt(cfg, "a protected file has another name (a hard link), which writes it around the guard and the validators' confinement: %s. "+
		"The agent must not link its own checks. Find the other names (find / -xdev -samefile FILE), remove them, then stop again.", strings.Join(found, ", "))
}

// keptHalt is a halt's reason: what happened (format, args), and that the pending entries are kept.
func keptHalt(cfg *config.Config, format string, args ...any) string {
	return "stopgate halted the session: " + fmt.Sprintf(format, args...) + " The pending entries are kept in " + cfg.Settings.StateDir + "."
}

// appearedReason is the halt of a protected path a validator created (absent, it was not mounted).
func appearedReason(cfg *config.Config, paths []string) string {
	if len(paths) == 0 {
		return ""
	}
	var names []string
	for _, p := range paths {
		names = append(names, project.Display(cfg.Root, p))
	}
	return keptHalt(cfg, "a validator created %s, which is protected and did not exist before it ran: "+
		"the code a validator runs must not change stopgate's checks or hooks. Look at it, remove it, then stop again.", strings.Join(names, ", "))
}

// dotEnvReason halts on a client's .env setting the hooks' environment (trust.DotEnvHookEnv).
func dotEnvReason(cfg *config.Config, in *hook.Input) string {
	if in.Client == nil {
		return ""
	}
	var found []string
	for _, f := range trust.DotEnvHookEnv(in.Client.Name(), cfg.Root, os.Getenv("HOME")) {
		found = append(found, f.Show+" "+f.What())
	}
	if len(found) == 0 {
		return ""
	}
	return keptHalt(cfg, "%s, which the client loads into its environment and hands every hook and validator: "+
		"it would choose the programs they run. The agent must not set them. Remove them from the file (or ask the user to set them in the shell "+
		"that starts the client), then stop again.", strings.Join(found, "; "))
}

// confinement is the bwrap run validators run in (nil: confine = false, or not required and nothing to protect).
func confinement(cfg *config.Config, base *trust.Base) *validator.Confinement {
	if cfg.Settings.Confine == config.ConfineOff {
		return nil
	}
	c := &validator.Confinement{Required: cfg.Settings.Confine == config.ConfineOn}
	if base.Empty() && !c.Required {
		return nil
	}
	c.ReadOnly, c.Writable, c.Env = base.Confinement()
	return c
}

// unconfinedReason halts on validators that had to be confined and could not be (only the user can fix it).
func unconfinedReason(cfg *config.Config, v *Verdict) string {
	var names []string
	for _, c := range v.Checks {
		if c.Result.Unconfined {
			names = append(names, fmt.Sprintf("%q", c.Validator.Name))
		}
	}
	if len(names) == 0 {
		return ""
	}
	_, why := validator.Bwrap()
	return keptHalt(cfg, "[settings] confine = true, but the run validators cannot be confined: %v. Not run, so not judged: %s.\n\n"+
		"Install bubblewrap (apt-get install bubblewrap; scripts/install-sandbox-tools), or set confine = false in %s to run them unconfined, then stop again.",
		why, strings.Join(names, ", "), filepath.Base(cfg.File))
}
