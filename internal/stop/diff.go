package stop

import (
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/validator"
)

// diffSpec makes s a diff check when its validator is one: judged against
// the baseline of every pending prompt that uses it, each recorded when
// that prompt was first armed since it last passed.
func diffSpec(cfg *config.Config, s *validator.Spec, c *Check, entryOf map[string]queue.Entry) {
	if !c.Validator.IsDiff() {
		return
	}
	q := queue.Open(cfg.StateDir())
	s.Diff = c.Validator.Diff.Check()
	s.Skip = []string{cfg.StateDir()}
	for _, p := range c.Prompts {
		s.Baselines = append(s.Baselines, q.BaselinePath(entryOf[p]))
	}
}
