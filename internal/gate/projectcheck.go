package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/telemetry"
	"github.com/stopgate/stopgate/internal/trust"
)

// goToolFindings warns, in a Go module that pins stopgate with the tool
// directive, of what can make go tool build another stopgate than the one
// published: a replace (of stopgate or of any module it uses), a go.work
// or vendor/. The marketplace plugin runs no such build, so with no bin/
// every stop halts; the agent can write all three. Which modules they
// touch is the plugin's to read from the build: this only says where to
// look, and the remedy, which reads none of them.
func goToolFindings(ws workspace) []finding {
	if !goTool(ws.root) {
		return nil
	}
	var locs []string
	data, _ := os.ReadFile(filepath.Join(ws.root, "go.mod"))
	for n, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "replace" {
			locs = append(locs, "go.mod:"+strconv.Itoa(n+1))
			break
		}
	}
	for _, name := range []string{"go.work", "vendor/modules.txt"} {
		if _, err := os.Stat(filepath.Join(ws.root, name)); err == nil {
			locs = append(locs, name)
		}
	}
	var fs []finding
	for _, loc := range locs {
		fs = append(fs, finding{loc: loc, warning: true,
			msg: "if this replaces, vendors or puts in a workspace stopgate or a module it uses, the stopgate plugin does not run the go tool it builds, so with no bin/ every stop halts",
			// GOWORK=off: in a workspace, go list -m names no version.
			hint: "install stopgate as published in bin/, which the hooks run first: " + goInstall(`"$PWD"/bin`, "@$(GOWORK=off go list -m -f '{{.Version}}' "+goModule+")")})
	}
	return fs
}

// registeredFindings fails each hook program a client's hook file
// registers that the wall of the trusted base (trust.Base) does not cover: the
// agent could replace it with `exit 0` unseen. A program the set cannot
// locate (a bare name found on PATH, an unknown variable) is outside it.
// With protect = [] nothing is protected, and the wall's finding says so.
func registeredFindings(env *cli.Env, ws workspace, cfg *config.Config, regs []guard.Registered) []finding {
	base, _ := trust.For(trust.Project{Root: ws.root, Home: env.Getenv("HOME"), File: ws.file, Config: cfg, Regs: regs})
	set := base.Wall()
	if set.Empty() {
		return nil
	}
	var out []finding
	for _, r := range regs {
		if r.Path != "" && set.CheckPath(r.Path, ws.root) != nil {
			continue
		}
		what := "a program the tamper guard cannot locate (a bare name or a variable the client does not set)"
		if r.Path != "" {
			what = r.Path + ", outside the protected set"
		}
		out = append(out, finding{loc: r.File, msg: fmt.Sprintf("`%s` runs %s: the agent could replace it unseen", cli.Clip(r.Command, 80, "…"), what),
			hint: "register the hooks by an absolute path or one under the project: gate init --bin DIR"})
	}
	return dedupe(out)
}

// claudeRegistered reports whether the project registers stopgate's hooks
// with Claude Code: a stopgate program in its settings (regs,
// guard.Registrations).
func claudeRegistered(regs []guard.Registered) bool {
	for _, r := range regs {
		if strings.HasPrefix(r.File, ".claude/") {
			return true
		}
	}
	return false
}

// telemetryCheck is gate check's line on telemetry: where it goes, when
// [telemetry] says anything (off, the default, says nothing), and a
// warning when it is on and its exporter cannot be found.
func telemetryCheck(env *cli.Env, ws workspace, cfg *config.Config) (string, []finding) {
	if cfg == nil {
		return "", nil
	}
	t := cfg.Telemetry
	if !t.Enabled && t.Endpoint == "" {
		return "", nil
	}
	line := "telemetry: " + telemetry.Describe(t, env.Getenv)
	if !telemetry.Enabled(t, env.Getenv) {
		return line, nil
	}
	if _, err := telemetry.ExporterPath(); err != nil {
		return line, []finding{{loc: ws.rel(ws.file), warning: true, msg: "telemetry is on, but " + err.Error(),
			hint: "stops are judged and logged as ever; nothing is exported until it is installed"}}
	}
	return line, nil
}
