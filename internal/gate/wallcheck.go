package gate

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
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
// will be confined. Settings that are missing or not JSON are
// hookFindings' to report.
//
// summary is the state in a few words, for the line of a clean check.
func wallFindings(env *cli.Env, ws workspace, cfg *config.Config) (out []finding, summary string) {
	out = confineFindings(ws, cfg)
	rules, nothing := wallRules(ws.root, env.Getenv("HOME"), ws.file, cfg, nil)
	summary = wallSummary(cfg, nothing)
	w, bad := readWalls(settingsFiles(env, ws.root).all())
	if bad != nil {
		return append(out, *bad), summary
	}
	if len(w.files) == 0 || nothing {
		return out, summary // no settings: hookFindings says so; protect = []: nothing to wall in
	}
	out = append(out, w.against()...)
	out = append(out, w.unset()...)
	out = append(out, w.lacking(rules)...)
	out = append(out, w.excludedCommands()...)
	if w.value["enabled"] {
		out = append(out, toolFindings(env, w.primary)...)
	}
	return out, summary
}

func wallSummary(cfg *config.Config, nothing bool) string {
	s := "the OS wall is up"
	if nothing {
		s = "nothing protected (protect = [])"
	}
	switch {
	case cfg == nil || !hasRun(cfg):
	case cfg.Settings.Confine == config.ConfineOff:
		s += "; run validators unconfined (confine = false)"
	default:
		s += "; run validators confined"
	}
	return s
}

// walls is the wall's settings across the settings files, as the client
// merges them.
type walls struct {
	primary  string // the project's shared settings, where gate init writes
	files    []settings.WallStatus
	names    []string
	value    map[string]bool // each sandbox key's value that counts
	from     map[string]int  // the index of the file it counts from
	deny     []string        // every file's rules: the client adds them up
	excluded []string
}

// readWalls reads the settings files that exist. A file of valid JSON that
// is shaped wrong is a finding: nothing else would report it.
func readWalls(srcs []hookSource) (walls, *finding) {
	w := walls{primary: srcs[0].name, value: map[string]bool{}, from: map[string]int{}}
	for _, src := range srcs {
		data, err := os.ReadFile(src.path)
		if err != nil {
			continue
		}
		st, err := settings.InspectWall(data)
		var se *settings.Error
		if errors.As(err, &se) && json.Valid(data) {
			return w, &finding{loc: fmt.Sprintf("%s:%d:%d", src.name, se.Line, se.Column), warning: true,
				msg: se.Msg + ": the OS wall is down", hint: "fix it by hand, then run gate init again"}
		}
		if err != nil {
			return walls{}, nil // not JSON: hookFindings says so
		}
		i := len(w.files)
		w.files, w.names = append(w.files, st), append(w.names, src.name)
		w.deny = append(w.deny, st.Deny...)
		w.excluded = append(w.excluded, st.Excluded...)
		for k, v := range st.Set {
			if j, seen := w.from[k]; !seen || later(src.name, w.names[j]) {
				w.value[k], w.from[k] = v, i
			}
		}
	}
	return w, nil
}

// present reports whether any part of the wall is there: a sandbox key set
// as gate init writes it, or a deny rule of rules. A project gate init
// left without a wall (--no-wall) has none, and no wall to weaken.
func (w walls) present(rules []string) bool {
	for _, st := range w.files {
		if st.Walled() {
			return true
		}
	}
	return slices.ContainsFunc(rules, func(r string) bool { return slices.Contains(w.deny, r) })
}

// against reports the sandbox keys set against the wall, where the value
// that counts is written.
func (w walls) against() []finding {
	var out []finding
	for i, st := range w.files {
		for _, a := range st.Against() {
			key, _, _ := strings.Cut(strings.TrimPrefix(a, "sandbox."), " ")
			if w.from[key] == i {
				out = append(out, finding{loc: fmt.Sprintf("%s:%d", w.names[i], st.Line[key]), warning: true,
					msg: a + ": the OS wall is down", hint: "set it as gate init writes it, or keep it knowing the guard alone stands"})
			}
		}
	}
	return out
}

// unset reports the sandbox keys no file sets.
func (w walls) unset() []finding {
	var unset []string
	for _, k := range []string{"enabled", "failIfUnavailable", "allowUnsandboxedCommands"} {
		if _, ok := w.value[k]; !ok {
			unset = append(unset, "sandbox."+k)
		}
	}
	if len(unset) == 0 {
		return nil
	}
	return []finding{{loc: w.primary, warning: true,
		msg:  "the OS wall is down: " + strings.Join(unset, ", ") + " not set, so the agent's Bash can write the protected set in ways the guard cannot see",
		hint: `"gate init" writes the sandbox settings and keeps the rest of the file`}}
}

// lacking reports the deny rules of the protected set no file has.
func (w walls) lacking(rules []string) []finding {
	var missing []string
	for _, r := range rules {
		if !slices.Contains(w.deny, r) {
			missing = append(missing, r)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return []finding{{loc: w.primary, warning: true,
		msg:  "permissions.deny lacks " + strings.Join(missing, ", ") + ": the sandbox and the Write/Edit tools let the agent change it",
		hint: `"gate init" adds the deny rules of the protected set (run it again after adding a run validator)`}}
}

func (w walls) excludedCommands() []finding {
	if len(w.excluded) == 0 {
		return nil
	}
	return []finding{{loc: w.primary, warning: true,
		msg:  "sandbox.excludedCommands run outside the OS sandbox: " + strings.Join(w.excluded, ", "),
		hint: "keep it empty: an excluded command can write the protected set"}}
}

// toolFindings reports the sandbox tools this machine lacks.
func toolFindings(env *cli.Env, loc string) []finding {
	m := missingTools(env)
	if len(m) == 0 {
		return nil
	}
	return []finding{{loc: loc, warning: true,
		msg:  "the OS sandbox needs " + strings.Join(m, " and ") + ", not installed here: the client refuses every Bash command until it is",
		hint: "apt-get install " + strings.Join(packages(m), " ") + " (as root; scripts/install-sandbox-tools does it)"}}
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
