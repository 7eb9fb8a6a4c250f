package stop

import (
	"context"
	"slices"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/validator"
)

// Kind is what the gate answers a stop.
type Kind int

// The gate's answers.
const (
	Pass  Kind = iota // let the stop through
	Block             // send the agent back with the failures
	Halt              // end the session; the user sees the failures
)

// The kinds of reason of a judged block or halt.
const (
	CauseFailed     = "validators_failed" // a block: validators failed
	CauseMaxBlocks  = "max_blocks"        // a halt: still failing after max_blocks blocks
	CauseOnFailure  = "on_failure_halt"   // a halt: on_failure = "halt"
	CauseUnconfined = "unconfined"        // a halt: a validator could not be confined
	CauseVanished   = "mapping_vanished"  // a halt: an armed prompt lost its mapping
)

// Verdict is the gate's decision on one stop.
type Verdict struct {
	Kind   Kind
	Reason string
	// Cause is the kind of the reason of a block or halt, for the outcome
	// log and telemetry: one of the Cause* values.
	Cause  string
	Done   []queue.Entry // entries to remove: all their validators passed, or their prompt is unmapped
	Blocks int           // consecutive blocked stops after this one
	Checks []Check       // every validator run, in mappings.toml order
	// Reconciled are prompts judged although their entry was missing:
	// the transcript armed them (reconcile.go).
	Reconciled []outcome.Discrepancy
	// Changed tells the human which of the gate's own inputs changed
	// since the prompts were armed (changed.go): a pass shows it as a
	// system message, a block or halt adds it to the reason.
	Changed string
	// Observed is what the stop would have been answered outside observe
	// mode (settings.mode): Block or Halt where Kind is Pass; Pass else.
	Observed Kind
	// Observing: judged in observe mode, pass or not.
	Observing bool
	// relayDecided: relay has asked the client how it takes this halt,
	// from the block count; a halt before that (a config that cannot be
	// read) is asked from the client's record (judging.writeHalt).
	relayDecided bool
}

// Failed returns the checks that failed, in order: the one count of
// failures for the reason, gate run's summary and its exit code.
func (v *Verdict) Failed() []Check {
	var out []Check
	for _, c := range v.Checks {
		if !c.Result.Passed {
			out = append(out, c)
		}
	}
	return out
}

// Check is one validator's run for the pending prompts that use it.
type Check struct {
	Validator *config.Validator
	Prompts   []string // pending prompts that use it, in mapping order
	Result    validator.Result
	// Unchanged is a check not run: it passed earlier in the scope and
	// nothing it depends on changed since (reuse.go). Result says passed.
	Unchanged *Unchanged
}

// Decide runs the validators of entries and decides the stop, running
// every one (`gate run`: nothing is reused). prior is the
// count of consecutive blocked stops before this one. An entry whose prompt
// is no longer mapped halts the stop without running anything: the agent
// must not disarm a check by editing the config it is checked by. A
// validator still running at dl is killed and fails (deadline.go).
func Decide(ctx context.Context, cfg *config.Config, in *hook.Input, entries []queue.Entry, prior int, dl Deadline) *Verdict {
	return decide(ctx, cfg, in, entries, prior, dl, reusing{})
}

// reusing is whether a stop reuses passes (ReusePolicy), for which scope,
// and whether under the default policy (trusted: the wall stands for the
// record, so it is written only after confined runs). on is asked only
// of a stop that has a run validator to reuse: the policy reads the
// client's settings files. nil: off.
type reusing struct {
	on      func() bool
	trusted bool
	scope   queue.Scope
}

// decide is Decide, taking validators that passed earlier in the scope
// as passed while nothing they depend on changed, when ru is on.
func decide(ctx context.Context, cfg *config.Config, in *hook.Input, entries []queue.Entry, prior int, dl Deadline, ru reusing) *Verdict {
	v := &Verdict{}
	if len(entries) == 0 {
		return v
	}
	if gone := vanished(cfg, entries); len(gone) > 0 {
		v.Kind, v.Reason, v.Cause = Halt, vanishedReason(cfg, gone), CauseVanished
		return v
	}
	set := protectedSet(cfg, in)
	if why := linkedReason(cfg, set); why != "" {
		v.Kind, v.Reason = Halt, why
		return v
	}
	v.Observing = cfg.Settings.Mode == config.ModeObserve
	checks, specs := plan(cfg, in, entries)
	var r *reuse
	if ru.on != nil {
		r = startReuse(cfg, ru, checks)
	}
	unchanged, keys := r.toRun(cfg, checks, specs)
	var run []validator.Spec
	for i := range specs {
		if unchanged[i] == nil {
			run = append(run, specs[i])
		}
	}
	confine := confinement(cfg, set)
	missing := validator.Missing(creatable(cfg, set))
	results := validator.Run(ctx, validator.Env{Dir: cfg.Root, Vars: []string{
		"CLAUDE_PROJECT_DIR=" + cfg.Root,
		"STOPGATE_SESSION_ID=" + in.SessionID,
		"STOPGATE_AGENT_ID=" + in.AgentID,
	}, Confine: confine, Deadline: dl.At, DeadlineWhy: dl.why()}, run)
	failed := map[string]bool{} // prompt keys with a failing validator
	for i := range checks {
		checks[i].Unchanged = unchanged[i]
		if unchanged[i] != nil {
			checks[i].Result = validator.Result{Name: checks[i].Validator.Name, Passed: true}
		} else {
			checks[i].Result, results = results[0], results[1:]
		}
		if !checks[i].Result.Passed {
			for _, p := range checks[i].Prompts {
				failed[p] = true
			}
		}
	}
	v.Checks = checks
	if why := appearedReason(cfg, validator.Appeared(missing)); why != "" {
		v.Kind, v.Reason = Halt, why
		return v
	}
	r.finish(checks, keys)
	for _, e := range entries {
		if !failed[e.Prompt] {
			v.Done = append(v.Done, e)
		}
	}
	if len(failed) == 0 {
		return v
	}
	if why := unconfinedReason(cfg, v); why != "" {
		v.Kind, v.Reason, v.Cause = Halt, why, CauseUnconfined
		return v
	}
	if v.Observing {
		// Roll-out: judged and recorded, shown to the user, never blocked;
		// the stop passes and each stop judges what was armed since.
		v.Observed, v.Done = Block, entries
		if cfg.Settings.OnFailure == config.OnFailureHalt {
			v.Observed = Halt
		}
		v.Reason = observeReason(cfg, v)
		return v
	}
	if cfg.Settings.OnFailure == config.OnFailureHalt || prior >= cfg.Settings.MaxBlocks {
		v.Kind, v.Reason, v.Cause = Halt, haltReason(cfg, v, prior), CauseMaxBlocks
		if cfg.Settings.OnFailure == config.OnFailureHalt {
			v.Cause = CauseOnFailure
		}
		return v
	}
	v.Kind, v.Blocks, v.Cause = Block, prior+1, CauseFailed
	v.Reason = blockReason(cfg, v)
	return v
}

// vanished returns the entries whose prompt has no mapping any more.
func vanished(cfg *config.Config, entries []queue.Entry) []queue.Entry {
	var gone []queue.Entry
	for _, e := range entries {
		if cfg.Mapping(e.Prompt) == nil {
			gone = append(gone, e)
		}
	}
	return gone
}

// plan resolves the pending prompts' validators from the config: each
// distinct validator once, in mappings.toml order. Every entry's prompt is
// mapped (Decide checked).
func plan(cfg *config.Config, in *hook.Input, entries []queue.Entry) ([]Check, []validator.Spec) {
	byName := map[string]*Check{}
	entryOf := map[string]queue.Entry{}
	for _, e := range entries {
		entryOf[e.Prompt] = e
	}
	// Walk mappings in file order so prompts attach in a stable order.
	for _, m := range cfg.Mappings {
		if _, ok := entryOf[m.Prompt]; !ok {
			continue
		}
		for _, name := range m.Validators {
			c, ok := byName[name]
			if !ok {
				c = &Check{Validator: cfg.Validators[name]}
				byName[name] = c
			}
			if !slices.Contains(c.Prompts, m.Prompt) {
				c.Prompts = append(c.Prompts, m.Prompt)
			}
		}
	}
	var checks []Check
	var specs []validator.Spec
	for _, name := range cfg.Order {
		c, ok := byName[name]
		if !ok {
			continue
		}
		checks = append(checks, *c)
		specs = append(specs, spec(cfg, c, entryOf))
	}
	return checks, specs
}

// spec turns a validator into what the engine runs. A validator shared by
// several pending prompts runs once, with the first prompt's variables. A
// diff check is judged against the baseline of every pending prompt that
// uses it, each recorded when that prompt was first armed since it last
// passed.
func spec(cfg *config.Config, c *Check, entryOf map[string]queue.Entry) validator.Spec {
	v, e := c.Validator, entryOf[c.Prompts[0]]
	s := validator.Spec{Name: v.Name, File: v.File, Run: v.Run, Timeout: v.Timeout}
	if v.Contains != "" {
		s.Expect = append(s.Expect, validator.MustExpectation(validator.Contains, v.Contains))
	}
	if v.NotContains != "" {
		s.Expect = append(s.Expect, validator.MustExpectation(validator.NotContains, v.NotContains))
	}
	if v.Regex != "" {
		s.Expect = append(s.Expect, validator.MustExpectation(validator.Regex, v.Regex))
	}
	promptPath := e.Path
	if promptPath == "" {
		promptPath = cfg.PromptPath(e.Prompt)
	}
	s.Env = []string{"STOPGATE_PROMPT=" + e.Prompt, "STOPGATE_PROMPT_PATH=" + promptPath}
	if v.IsDiff() {
		q := queue.Open(cfg.StateDir())
		s.Diff, s.Skip = v.Diff.Check(), []string{cfg.StateDir()}
		for _, p := range c.Prompts {
			s.Baselines = append(s.Baselines, q.BaselinePath(entryOf[p]))
		}
	}
	return s
}
