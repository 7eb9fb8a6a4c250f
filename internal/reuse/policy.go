package reuse

import (
	"fmt"
	"io"
	"math"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/validator"
)

// Policy says whether reuse is on for a stop of client (its dialect's
// name; Claude Code's is "claude") in the project of cfg, and why: `gate
// check` prints the why, the stop acts on it. Off under reuse = false; on
// under reuse = true; unset, on only where the client's OS sandbox walls
// the state dir off from the agent's writes (Claude Code's sandbox with
// its deny rule for the state dir) and run validators are confined.
func Policy(cfg *config.Config, client, home string) (on bool, why string) {
	switch cfg.Settings.Reuse {
	case config.ReuseOff:
		return false, "off ([settings] reuse = false)"
	case config.ReuseOn:
		return true, "on ([settings] reuse = true: the record is trusted even where the agent could write the state dir)"
	}
	if client != "claude" {
		return false, "off: the state dir is not walled off from " + client + "'s agent (set [settings] reuse = true to reuse anyway)"
	}
	if cfg.Settings.Confine == config.ConfineOff {
		return false, "off: run validators are not confined (confine = false), so the code they run could write the record (set [settings] reuse = true to reuse anyway)"
	}
	rule := settings.DenyRule(filepath.ToSlash(cfg.Root), filepath.ToSlash(home), filepath.ToSlash(cfg.StateDir()), true)
	if walled, missing := settings.Walled(claudeSettings(cfg.Root, home), rule); !walled {
		return false, "off: the OS wall is not up around the state dir (" + missing + "); set [settings] reuse = true to reuse anyway"
	}
	// Confined, or the code they run could write a record the next stop
	// trusts (and keep the gate from removing it).
	if p := cfg.Settings.Protect; p != nil && len(p) == 0 && cfg.Settings.Confine != config.ConfineOn {
		return false, "off: protect = [] leaves run validators unconfined, so the code they run could write the record (set [settings] reuse = true to reuse anyway)"
	}
	if _, err := validator.Bwrap(); err != nil {
		return false, "off: run validators cannot be confined here (" + err.Error() + "), so the code they run could write the record (set [settings] reuse = true to reuse anyway)"
	}
	return true, "on: the OS wall keeps the agent from writing the state dir, where the record is"
}

// claudeSettings are Claude Code's settings files' texts in the order it
// reads them (nil for a file that is not there, or not a regular file:
// read through regular, a named pipe planted there cannot hold the stop,
// and a wall it hides is taken as down, so nothing is reused).
func claudeSettings(root, home string) [][]byte {
	files := guard.ClaudeSettings(root, home)
	out := make([][]byte, len(files))
	for i, f := range files {
		out[i], _ = regular.ReadFile(f.Path, math.MaxInt64)
	}
	return out
}

// Lines says to w, for each of clients (dialect names), whether a stop
// reuses the passes of validators whose inputs did not change, and why:
// the stop's own decision (Policy). A config without run validators says
// nothing.
func Lines(w io.Writer, cfg *config.Config, home string, clients []string) {
	if cfg == nil {
		return
	}
	if runs, err := cfg.Runs(); err == nil && len(runs) == 0 {
		return // unknown: told as if it had
	}
	for _, n := range clients {
		_, why := Policy(cfg, n, home)
		prefix := "reuse of unchanged passes: "
		if len(clients) > 1 {
			prefix = "reuse of unchanged passes (" + n + "): "
		}
		fmt.Fprintln(w, prefix+why)
	}
}
