package stop

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/trust"
	"github.com/stopgate/stopgate/internal/validator"
)

// confinement runs a stop's run validators in one bubblewrap with the
// trusted base read-only, so the code they run cannot rewrite the gate's
// inputs. nil (confine = false) runs them unconfined; unset, they are
// confined where bwrap works; confine = true halts where it cannot.
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

// unconfinedReason is the halt of validators that had to be confined and
// could not be: not a block, as only the user can install bwrap. "" for none.
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
