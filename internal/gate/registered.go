package gate

import (
	"fmt"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/trust"
)

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
