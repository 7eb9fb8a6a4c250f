package stop

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/trust"
	"github.com/stopgate/stopgate/internal/validator"
)

// confinement is how a stop's run validators execute: inside one bubblewrap
// with the trusted base read-only (the base the guard and the sandbox's
// deny rules derive from) and HOME with it but its caches, so that code
// they run, often the agent's own tests, cannot rewrite mappings.toml, the
// state dir, the validators, the user's settings or a program the hooks
// run. The gate itself writes the state dir, outside. nil runs them as the
// gate runs: confine = false. Unset, they are confined where bwrap works
// and run as before where it does not (gate check says so); confine =
// true makes a validator that cannot be confined a halt
// (unconfinedReason).
func confinement(cfg *config.Config, base *trust.Base) *validator.Confinement {
	if cfg.Settings.Confine == config.ConfineOff {
		return nil
	}
	c := &validator.Confinement{Required: cfg.Settings.Confine == config.ConfineOn}
	if base.Empty() && !c.Required {
		return nil
	}
	c.ReadOnly, c.Writable = base.ReadOnly(), base.Writable()
	c.Env = base.ValidatorEnv()
	return c
}

// unconfinedReason is the halt of a stop whose validators had to be
// confined and could not be: judging without them would let the stop
// through unchecked, and blocking would send the agent after something
// only the user can install. "" when every validator ran.
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
	return fmt.Sprintf("stopgate halted the session: [settings] confine = true, but the run validators cannot be confined: %v. "+
		"Not run, so not judged: %s.\n\n"+
		"Install bubblewrap (apt-get install bubblewrap; scripts/install-sandbox-tools), or set confine = false in %s to run them unconfined, then stop again. "+
		"The pending entries are kept in %s.",
		why, strings.Join(names, ", "), filepath.Base(cfg.File), cfg.Settings.StateDir)
}
