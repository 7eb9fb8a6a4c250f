package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/validator"
)

// wallFindings says whether the OS wall is up and why not: the sandbox
// settings as the client merges the settings files (the local settings
// over the project's over the user's), the deny rules the protected set
// needs, the sandbox tools on this machine; and whether run validators
// will be confined. Settings that are missing or cannot be read are
// hookFindings' to report.
//
// summary is the state in a few words, for the line of a clean check.
func wallFindings(env *cli.Env, ws workspace, cfg *config.Config) (out []finding, summary string) {
	out = confineFindings(ws, cfg)
	summary = "the OS wall is up"
	set := protectedSet(ws.root, env.Getenv("HOME"), ws.file, cfg, nil, "")
	if set.Empty() {
		summary = "nothing protected (protect = [])"
	}
	switch {
	case cfg == nil || !hasRun(cfg):
	case cfg.Settings.Confine == config.ConfineOff:
		summary += "; run validators unconfined (confine = false)"
	default:
		summary += "; run validators confined"
	}
	srcs := settingsFiles(env, ws.root)
	var sts []settings.WallStatus
	var names []string
	for _, src := range srcs {
		data, err := os.ReadFile(src.path)
		if err != nil {
			continue
		}
		st, err := settings.InspectWall(data)
		var se *settings.Error
		if errors.As(err, &se) && json.Valid(data) {
			// Valid JSON of the wrong shape: hookFindings has nothing to say.
			return append(out, finding{loc: fmt.Sprintf("%s:%d:%d", src.name, se.Line, se.Column), warning: true,
				msg: se.Msg + ": the OS wall is down", hint: "fix it by hand, then run gate init again"}), summary
		}
		if err != nil {
			return out, summary // not JSON: hookFindings says so
		}
		sts, names = append(sts, st), append(names, src.name)
	}
	if len(sts) == 0 || set.Empty() {
		return out, summary // no settings: hookFindings says so; protect = []: nothing to wall in
	}
	primary := srcs[0].name
	stateDir := filepath.Join(ws.root, config.DefaultStateDir)
	if cfg != nil {
		stateDir = cfg.StateDir()
	}
	// The client reads the user's settings, then the project's, then the
	// local ones: the last that sets a key wins. sts is in the opposite
	// order, the project's first.
	var deny, excluded []string
	set1 := map[string]bool{}
	from := map[string]int{} // the file whose value counts
	for i, st := range sts {
		deny = append(deny, st.Deny...)
		excluded = append(excluded, st.Excluded...)
		for k, v := range st.Set {
			if j, seen := from[k]; !seen || later(names[i], names[j]) {
				set1[k], from[k] = v, i
			}
		}
	}
	for i, st := range sts {
		for _, a := range st.Against() {
			key, _, _ := strings.Cut(strings.TrimPrefix(a, "sandbox."), " ")
			if from[key] == i {
				out = append(out, finding{loc: fmt.Sprintf("%s:%d", names[i], st.Line[key]), warning: true,
					msg: a + ": the OS wall is down", hint: "set it as gate init writes it, or keep it knowing the guard alone stands"})
			}
		}
	}
	enabled := set1["enabled"]
	var unset []string
	for _, k := range []string{"enabled", "failIfUnavailable", "allowUnsandboxedCommands"} {
		if _, ok := set1[k]; !ok {
			unset = append(unset, "sandbox."+k)
		}
	}
	if len(unset) > 0 {
		out = append(out, finding{loc: primary, warning: true,
			msg:  "the OS wall is down: " + strings.Join(unset, ", ") + " not set, so the agent's Bash can write the protected set in ways the guard cannot see",
			hint: `"gate init" writes the sandbox settings and keeps the rest of the file`})
	}
	var missing []string
	for _, r := range denyRules(set, ws.root, env.Getenv("HOME"), stateDir) {
		if !slices.Contains(deny, r) {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		out = append(out, finding{loc: primary, warning: true,
			msg:  "permissions.deny lacks " + strings.Join(missing, ", ") + ": the sandbox and the Write/Edit tools let the agent change it",
			hint: `"gate init" adds the deny rules of the protected set (run it again after adding a run validator)`})
	}
	if len(excluded) > 0 {
		out = append(out, finding{loc: primary, warning: true,
			msg:  "sandbox.excludedCommands run outside the OS sandbox: " + strings.Join(excluded, ", "),
			hint: "keep it empty: an excluded command can write the protected set"})
	}
	if enabled {
		if m := missingTools(env); len(m) > 0 {
			out = append(out, finding{loc: primary, warning: true,
				msg:  "the OS sandbox needs " + strings.Join(m, " and ") + ", not installed here: the client refuses every Bash command until it is",
				hint: "apt-get install " + strings.Join(packages(m), " ") + " (as root; scripts/install-sandbox-tools does it)"})
		}
	}
	return out, summary
}

// later reports whether the client reads settings file a after b, so that
// a's keys win: the user's first, then the project's, then the local ones.
func later(a, b string) bool {
	rank := func(name string) int {
		switch {
		case strings.HasPrefix(name, "~"):
			return 0
		case strings.HasSuffix(name, ".local.json"):
			return 2
		}
		return 1
	}
	return rank(a) > rank(b)
}

// confineFindings says when run validators will not be confined: an error
// when confine = true (each stop that runs one would halt), a warning when
// unset.
func confineFindings(ws workspace, cfg *config.Config) []finding {
	if cfg == nil || cfg.Settings.Confine == config.ConfineOff || !hasRun(cfg) {
		return nil
	}
	_, err := validator.Bwrap()
	if err == nil {
		return nil
	}
	loc := ws.rel(ws.file)
	if cfg.Settings.Confine == config.ConfineOn {
		return []finding{{loc: loc, msg: "settings.confine: run validators cannot be confined: " + err.Error() + "; every stop that runs one halts",
			hint: "install bubblewrap (scripts/install-sandbox-tools), or set confine = false"}}
	}
	return []finding{{loc: loc, warning: true, msg: "run validators are not confined: " + err.Error() + "; code they run (the agent's tests) can rewrite the protected set",
		hint: "install bubblewrap (scripts/install-sandbox-tools), or set confine = false to say they run unconfined"}}
}

func hasRun(cfg *config.Config) bool {
	for _, v := range cfg.Validators {
		if v.Run != "" {
			return true
		}
	}
	return false
}
