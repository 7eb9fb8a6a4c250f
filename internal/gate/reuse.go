package gate

import (
	"fmt"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/dialect"
	"github.com/stopgate/stopgate/internal/stop"
)

// reuseLines says, for each client checked, whether a stop reuses the
// passes of validators whose inputs did not change, and why: the stop's
// own decision (stop.ReusePolicy).
func reuseLines(env *cli.Env, cfg *config.Config, claude bool, clients []*agentClient) {
	if cfg == nil || !hasRun(cfg) {
		return
	}
	names := []string{}
	if claude {
		names = append(names, dialect.Claude)
	}
	for _, c := range clients {
		names = append(names, c.name)
	}
	for _, n := range names {
		_, why := stop.ReusePolicy(cfg, n, env.Getenv("HOME"))
		prefix := "reuse of unchanged passes: "
		if len(names) > 1 {
			prefix = "reuse of unchanged passes (" + n + "): "
		}
		fmt.Fprintln(env.Stdout, prefix+why)
	}
}
