package gate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
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
func wallFindings(env *cli.Env, ws workspace, cfg *config.Config, claude *claudeTexts, regs []guard.Registered) (out []finding, summary string) {
	out = confineFindings(ws, cfg)
	rules, nothing := wallRules(ws.root, env.Getenv("HOME"), ws.file, cfg, regs)
	summary = wallSummary(cfg, nothing)
	w, bad := readWalls(claude.texts())
	if bad != nil {
		return append(out, *bad), summary
	}
	if w.Read == 0 || nothing {
		return out, summary // no settings: hookFindings says so; protect = []: nothing to wall in
	}
	out = append(out, wallDown(claude.claudeFiles, w, rules)...)
	if w.Value["enabled"] {
		out = append(out, toolFindings(env, claude.shared.Name)...)
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

// readWalls reads the wall from the settings files (settings.ReadWalls),
// in the order the client reads them. A file of valid JSON that is shaped
// wrong is a finding: nothing else would report it. One that is not JSON
// is hookFindings' to report, and leaves no wall.
func readWalls(files []settingsText) (settings.Walls, *finding) {
	docs := make([]*settings.Doc, len(files))
	for i, f := range files {
		docs[i] = f.doc
	}
	w, bad, err := settings.ReadWalls(docs)
	var se *settings.Error
	if errors.As(err, &se) && docs[bad].JSON() {
		return w, &finding{loc: fmt.Sprintf("%s:%d:%d", files[bad].Name, se.Line, se.Column), warning: true,
			msg: se.Msg + ": the OS wall is down", hint: "fix it by hand, then run gate init again"}
	}
	return w, nil
}

// wallDown reports what takes the wall down, as the client merges the
// settings files: the sandbox keys set against it (where the value that
// counts is written) or unset, the deny rules of rules no file has, and
// commands excluded from the sandbox.
func wallDown(files claudeFiles, w settings.Walls, rules []string) []finding {
	var out []finding
	for _, a := range w.Against() {
		out = append(out, finding{loc: fmt.Sprintf("%s:%d", files.read[a.File].Name, a.Line), warning: true,
			msg: a.Text + ": the OS wall is down", hint: "set it as gate init writes it, or keep it knowing the guard alone stands"})
	}
	primary := files.shared.Name
	if unset := w.Unset(); len(unset) > 0 {
		out = append(out, finding{loc: primary, warning: true,
			msg:  "the OS wall is down: " + strings.Join(unset, ", ") + " not set, so the agent's Bash can write the protected set in ways the guard cannot see",
			hint: `"gate init" writes the sandbox settings and keeps the rest of the file`})
	}
	if missing := w.Lacking(rules); len(missing) > 0 {
		out = append(out, finding{loc: primary, warning: true,
			msg:  "permissions.deny lacks " + strings.Join(missing, ", ") + ": the sandbox and the Write/Edit tools let the agent change it",
			hint: `"gate init" adds the deny rules of the protected set (run it again after adding a run validator)`})
	}
	if len(w.Excluded) > 0 {
		out = append(out, finding{loc: primary, warning: true,
			msg:  "sandbox.excludedCommands run outside the OS sandbox: " + strings.Join(w.Excluded, ", "),
			hint: "keep it empty: an excluded command can write the protected set"})
	}
	return out
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

// hasRun says whether cfg has a run validator, as the guard asks (Runs).
func hasRun(cfg *config.Config) bool {
	runs, err := cfg.Runs()
	return err != nil || len(runs) > 0 // unknown: judged as if it had
}
