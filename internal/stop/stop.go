// Package stop runs, at Stop and SubagentStop, mappings.toml's validators of the scope's pending prompts and answers a
// pass, a block or a halt: once one is armed every path ends in a block or a halt (docs/fail-closed.md).
package stop

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/stopgate/stopgate/internal/atomicfile"
	"github.com/stopgate/stopgate/internal/baseline"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/modelapi"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/reconcile"
	"github.com/stopgate/stopgate/internal/reuse"
	"github.com/stopgate/stopgate/internal/telemetry"
	"github.com/stopgate/stopgate/internal/trust"
	"github.com/stopgate/stopgate/internal/validator"
)

// Events are the hook events the gate handles.
var Events = []string{hook.Stop, hook.SubagentStop}

// Hook judges one stop from env.Stdin against configFile ("": the project's) within the hook timeout (0: the client's).
func Hook(env *cli.Env, configFile string, opt client.Options, timeout time.Duration) (err error) {
	dl := DeadlineFrom(time.Now(), HookTimeout(opt.Client, timeout))
	ans := client.AnswerTo(env.Stdout, opt.Client) // until the input says whose
	defer func() {
		if p := recover(); p != nil {
			err = (&judging{env: env, ans: &ans}).answer(nil, &panicError{value: p, stack: debug.Stack()})
		}
	}()
	in, ans, err := client.Decode(env.Stdin, env.Stdout, opt, Events...)
	var mm *client.MismatchError
	switch {
	case errors.Is(err, client.ErrIgnored):
		return nil
	case errors.As(err, &mm) && mm.Input != nil: // another client's stop halts
		return hook.AnswerTo(env.Stdout, mm.Input).Write(hook.Halt("stopgate cannot check this stop: " + err.Error()))
	case err != nil:
		return err
	}
	s := &judging{env: env, in: in, ans: &ans, configFile: configFile, root: project.Root(env.Getenv, in.Cwd, env.Dir), dl: dl, scope: queue.Scope{Session: in.SessionID, Agent: in.AgentID}}
	if in.HookEventName == hook.Stop {
		s.scope.Agent = "" // the main thread's stop, whatever else the input says
	}
	return s.answer(s.judge())
}

// judging is one stop being judged, and what it is decided from: all read before a validator runs (one may delete it).
type judging struct {
	env        *cli.Env
	in         *hook.Input
	ans        *hook.Answer // the answers to in, in its client's shape; nil: no client (gate run)
	configFile string
	root       string
	scope      queue.Scope
	dl         Deadline
	clear      bool                      // the queue and record hold nothing to judge; until then an error may hide something armed
	cfg        *config.Config            // the whole config; nil when nothing is armed
	loaded     *config.Config            // as loaded, maybe from the cache; nil: changes are not told
	q          *queue.Queue              // the state dir
	queued     []queue.Entry             // as the queue holds them
	entries    []queue.Entry             // queued, then those the client's record shows missing: what is armed
	prior      int                       // consecutive blocked stops before this one
	rec        *reconcile.Reconciliation // nil: no record reconciled
	ru         reuse.Use
}

// answer writes the verdict, or fails closed on err: a halt, unless nothing is known armed.
func (s *judging) answer(v *Verdict, err error) error {
	switch {
	case err == nil && v.Kind == Halt && !v.relayDecided:
		return s.writeHalt(v.Reason)
	case err == nil && v.Kind == Halt:
		return s.ans.Write(hook.HaltSaid(v.Reason))
	case err == nil && v.Kind == Block:
		return s.ans.Write(hook.Block(v.Reason))
	case err == nil && v.Reason != "": // a pass only when it tells the user something
		return s.ans.Write(hook.Output{SystemMessage: v.Reason})
	case err == nil:
		return nil
	case s.clear:
		return err // exit 1: nothing is armed, the stop may pass
	}
	fmt.Fprintf(s.env.Stderr, "gate: %v\n", err)
	if bug, ok := errors.AsType[*panicError](err); ok {
		s.env.Stderr.Write(bug.stack)
	}
	return s.writeHalt(failReason(err, s.entries))
}

// writeHalt writes a halt the verdict did not relay: as a block to a client that hides a halt's reason, unless its record shows one fed back this turn.
func (s *judging) writeHalt(reason string) error {
	o, relays := s.ans.Halt(reason, false)
	if !relays || s.in == nil || reconcile.RelayFedBack(s.in, s.scope) {
		o = hook.HaltSaid(reason)
	}
	return s.ans.Write(o)
}

// judge reads, decides, applies and records; a panic comes back as an error.
func (s *judging) judge() (v *Verdict, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{value: p, stack: debug.Stack()}
		}
	}()
	ctx, release := interruptible() // a signal cancels the validators and halts
	defer release()
	if v, err = s.read(); v != nil || err != nil {
		return v, err // the config decided, or could not be read
	}
	v = s.decide(ctx)
	if intr, ok := errors.AsType[*interruptedError](context.Cause(ctx)); ok && len(s.entries) > 0 {
		return nil, intr
	}
	if err := s.apply(v); err != nil {
		return nil, err
	}
	if len(v.Checks) > 0 || len(v.Done) > 0 { // a decision, not a stop with nothing pending
		v.record(s.env, s.q, s.scope, s.in, telemetry.Request{Config: s.cfg.Telemetry, Root: s.root}, s.dl)
	}
	return v, nil
}

// read reads the config, queue, block count and what the client's record shows armed; a verdict: the config decided.
func (s *judging) read() (*Verdict, error) {
	loaded, err := config.Load(config.Path(s.root, s.configFile, s.env.Dir), s.root)
	if err != nil {
		if config.Missing(s.configFile, err) {
			return s.missingConfig()
		}
		return halt(configReason(err)), nil
	}
	s.loaded, s.q = loaded, queue.Open(loaded.StateDir())
	queued, bad, err := s.q.Snapshot(s.scope)
	if err != nil {
		return nil, err
	}
	s.queued, s.entries = queued, queued
	for _, b := range bad {
		fmt.Fprintf(s.env.Stderr, "gate: set aside %s: %v\n", b.Path, b.Error)
	}
	var at string // our own count: Claude Code's stop_hook_active can be false within a turn (anthropics/claude-code#54360)
	if s.prior, at, err = s.q.Blocks(s.scope); err != nil {
		return nil, err
	}
	if s.in.StopID != "" && at == s.in.StopID {
		s.clear = true // another registration of the client judged this stop (hook.Input.StopID): its answer stands
		return &Verdict{}, nil
	}
	if s.rec, err = reconcile.Run(loaded, s.in, s.q, s.scope, queued, s.dl.At); err != nil {
		return nil, err
	}
	if s.rec != nil {
		s.entries = slices.Concat(queued, s.rec.Missing)
		s.prior = max(s.prior, s.rec.Blocks) // the record remembers what a deleted file forgets
	}
	if len(s.entries) == 0 {
		if s.configFile == "" && reconcile.EmptyConfig(loaded.File) {
			return s.missingConfig()
		}
		s.clear = true
		return nil, nil
	}
	if s.cfg, err = loaded.Full(); err != nil { // only a stop with something to judge parses it all
		return halt(configReason(err)), nil
	}
	cfg, home := s.cfg, s.env.Getenv("HOME")
	s.ru = reuse.Use{Scope: s.scope, Trusted: cfg.Settings.Reuse == config.ReuseAuto, On: func() bool {
		on, _ := reuse.Policy(cfg, client.Of(s.in).Name, home)
		return on
	}}
	return nil, nil
}

// missingConfig decides a stop without mappings.toml by the client's record (reconcile.Missing).
func (s *judging) missingConfig() (*Verdict, error) {
	pending, taken, err := reconcile.Missing(s.root, s.in, s.scope, s.dl.At)
	switch {
	case err != nil:
		return nil, err
	case len(pending) > 0:
		s.entries = pending
		return halt(fmt.Sprintf("stopgate: %s is missing, but %d prompt(s) are pending for this session; restore it (the agent must not remove its own gate)",
			project.ConfigName, len(pending))), nil
	case taken == "":
		s.clear = true
		return &Verdict{}, nil
	}
	return halt(fmt.Sprintf("stopgate: %s is missing or empty, and the session's transcript shows %s since its last passing stop: what it arms cannot be told without the config. Restore %[1]s (git checkout %[1]s) and continue the session; the agent must not remove its own gate. (To remove stopgate from the project, remove its hooks too.)",
		project.ConfigName, taken)), nil
}

func halt(reason string) *Verdict { return &Verdict{Kind: Halt, Reason: reason} }

// apply records the verdict before the answer, so a gate killed after deciding checks again.
func (s *judging) apply(v *Verdict) error {
	if s.rec != nil {
		if err := s.rec.Settle(s.q, v.Kind == Pass, v.Done); err != nil {
			fmt.Fprintf(s.env.Stderr, "gate: %v\n", err) // costs the next stop a longer scan, never a check
		}
	}
	var err error
	if len(v.Done) > 0 {
		err = s.q.Remove(s.scope, v.Done)
	}
	if err == nil && v.Kind != Pass {
		kept := slices.DeleteFunc(slices.Clone(s.queued), func(e queue.Entry) bool {
			return slices.ContainsFunc(v.Done, func(d queue.Entry) bool { return d.Prompt == e.Prompt })
		})
		err = s.q.Keep(s.scope, kept)
	}
	if err == nil && v.Blocks != s.prior {
		err = s.q.SetBlocks(s.scope, v.Blocks, s.in.StopID)
	}
	if err != nil {
		return &unrecordedError{err: err, verdict: v}
	}
	return nil
}

func configReason(err error) string {
	if ps, ok := errors.AsType[config.Problems](err); ok {
		return "stopgate cannot check this stop: mappings.toml has mistakes; fix them (the agent must not edit its own gate):\n" +
			strings.Join(ps.Errors().Lines(), "\n")
	}
	return "stopgate cannot check this stop: " + err.Error()
}

// interruptedError is a signal received while validators ran; they were killed first.
type interruptedError struct{ sig os.Signal }

func (e *interruptedError) Error() string {
	return fmt.Sprintf("interrupted by %s while the validators ran; they were killed, with every process they started", cli.SignalName(e.sig))
}

// unrecordedError is a verdict the gate could not record: a block without its count could loop.
type unrecordedError struct {
	err     error
	verdict *Verdict
}

func (e *unrecordedError) Error() string {
	return fmt.Sprintf("the checks ran, but their result could not be recorded: %v", e.err)
}
func (e *unrecordedError) Unwrap() error { return e.err }

// panicError is a bug in stopgate, recovered.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string {
	return fmt.Sprintf("internal error (a bug in stopgate): %v", e.value)
}

// interruptible returns a context SIGTERM, SIGINT or SIGHUP cancels with an *interruptedError.
func interruptible() (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	go func() {
		select {
		case sig := <-ch:
			cancel(&interruptedError{sig: sig})
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		cancel(nil)
	}
}

// failReason is the halt's reason for a stop the gate could not judge: what failed, what to do, what is armed.
func failReason(err error, armed []queue.Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "stopgate halted the session: it could not judge this stop: %s.\n", err)
	b.WriteString(advice(err))
	var names []string
	for _, e := range armed {
		names = append(names, e.Prompt)
	}
	if len(armed) > 0 {
		fmt.Fprintf(&b, "\nArmed for this session: prompt %s. They stay armed and are judged at the next stop.", quoted(names))
	} else {
		b.WriteString("\nWhat is armed for this session could not be read; a stop is judged once it can be.")
	}
	if u, ok := errors.AsType[*unrecordedError](err); ok && u.verdict.Kind != Pass {
		b.WriteString("\n\nThe checks' own verdict:\n" + u.verdict.Reason)
	}
	return b.String()
}

// advice is what the human should do about err.
func advice(err error) string {
	switch {
	case errors.As(err, new(*queue.HeldError)):
		return "End the process holding the lock (`gate status` names it; stopgate's own hooks hold it for milliseconds), then continue the session."
	case errors.As(err, new(*interruptedError)):
		return "If the client's hook timeout stopped the gate, raise the Stop hook's timeout in .claude/settings.json or make the validators faster; then continue the session."
	case errors.As(err, new(*panicError)):
		return "Please report this with the stack trace the gate printed on stderr (the client's debug log has it)."
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "Free space on the disk that holds the state dir, then continue the session."
	case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return "Make the state dir (settings.state_dir, tmp/validation by default) writable by the user that runs the agent, then continue the session."
	case errors.Is(err, queue.ErrNotRegular):
		return "Remove the state dir's lock (stopgate creates it again as a plain file), then continue the session."
	}
	return "Fix the cause above (`gate status` shows what is armed), then continue the session."
}

// Deadline is when the gate must answer: running validators are killed (a killed hook passes); zero: none (gate run).
type Deadline struct {
	At   time.Time     // when running validators are killed
	Hook time.Duration // the client's hook timeout it derives from
}

// HookTimeout is the registered (--timeout) hook timeout if positive, else the client's default (Claude Code's).
func HookTimeout(name string, registered time.Duration) time.Duration {
	return cmp.Or(max(registered, 0), cmp.Or(client.Named(name), client.Claude).Timeout)
}

// Margin is how long before the hook timeout validators are killed: 5 s, or half a short timeout.
func Margin(hook time.Duration) time.Duration { return min(5*time.Second, hook/2) }

// DeadlineFrom returns the deadline of a stop whose hook started at start.
func DeadlineFrom(start time.Time, hook time.Duration) Deadline {
	return Deadline{At: start.Add(hook - Margin(hook)), Hook: hook}
}

// why is what a validator killed at the deadline reports.
func (d Deadline) why() string {
	if d.At.IsZero() {
		return ""
	}
	return fmt.Sprintf("it was still running when stopgate had to answer, %s before the client's hook timeout of %s (raise the gate hook's timeout and --timeout, or make the validator faster)",
		Margin(d.Hook), d.Hook)
}

// record logs and exports the verdict; a failure costs the record or export, never the decision.
func (v *Verdict) record(env *cli.Env, q *queue.Queue, scope queue.Scope, in *hook.Input, tel telemetry.Request, dl Deadline) {
	r := v.outcome(scope, time.Now().UTC())
	r.Client = client.Of(in).Name
	if telemetry.Enabled(tel.Config, env.Getenv) {
		tel.Records, tel.Deadline = []outcome.Record{r}, exportBudget(tel.Config.Timeout, dl, time.Now())
		if in.Client == nil {
			tel.Transcript = in.TranscriptPath // Claude Code's carries its version
		}
		err := errors.New("skipped: the validators ran up to the client's hook deadline, and the answer comes first")
		if tel.Deadline > 0 {
			err = telemetry.Send(tel)
		}
		if err != nil {
			note := "export failed: " + cli.OneLine(err.Error())
			fmt.Fprintf(env.Stderr, "gate: telemetry %s (the verdict stands)\n", note)
			r.Telemetry = note
		}
	}
	if err := outcome.Append(q.Dir(), r); err != nil {
		fmt.Fprintf(env.Stderr, "gate: %v\n", err)
	}
}

// outcome is the verdict as a log record.
func (v *Verdict) outcome(scope queue.Scope, now time.Time) outcome.Record {
	r := outcome.Record{Time: now, Event: reconcile.EventOf(scope), Session: scope.Session, Agent: scope.Agent, Blocks: v.Blocks, Prompts: []string{}, Checks: []outcome.Check{},
		Reconciled: v.Reconciled, Cause: v.Cause, Observe: v.Observing}
	r.Decision = map[Kind]string{Pass: outcome.Pass, Block: outcome.Block, Halt: outcome.Halt}[v.Kind]
	if v.Observed != Pass { // observe mode: what it would have been
		r.Decision = map[Kind]string{Block: outcome.WouldBlock, Halt: outcome.WouldHalt}[v.Observed]
	}
	if v.Kind == Halt {
		r.Reason = cli.Clip(v.Reason, 2000, "…") // it quotes validator output
	}
	var prompts []string // every check's, then those no longer mapped (no checks), each once
	for _, c := range v.Checks {
		prompts = append(prompts, c.Prompts...)
		oc := outcome.Check{Name: c.Validator.Name, Prompts: c.Prompts, Passed: c.Result.Passed, Result: c.Result.Summary(),
			DurationMS: outcome.Millis(c.Result.Duration), Kind: "file", Expect: c.Validator.Expects(), TimedOut: c.Result.TimedOut, Confined: c.Result.Confined}
		switch j := c.Validator.Judge; {
		case c.Validator.Run != "":
			code := c.Result.ExitCode
			oc.Kind, oc.ExitCode, oc.Expect = "run", &code, ""
		case c.Validator.IsDiff():
			oc.Kind = "diff"
		case j != nil:
			oc.Kind, oc.Model, oc.Unavailable = "judge", j.Model, c.Result.Unavailable
			if u := c.Result.Usage; u != nil {
				oc.InputTokens, oc.OutputTokens, oc.Cached = u.In, u.Out, u.Cached
				oc.CostUSD = (float64(u.In)*j.Price[0] + float64(u.Out)*j.Price[1]) / 1e6
			}
		}
		if u := c.Unchanged; u != nil {
			since := u.Since.UTC()
			oc.Reused, oc.Since, oc.SavedMS, oc.ExitCode = true, &since, outcome.Millis(u.Duration), nil
		}
		if c.Skipped != "" {
			oc.Skipped, oc.Passed, oc.Result, oc.ExitCode = true, false, "skipped: "+c.Skipped, nil
		}
		r.Checks = append(r.Checks, oc)
	}
	for _, e := range v.Done {
		prompts = append(prompts, e.Prompt)
	}
	for _, p := range prompts {
		if !slices.Contains(r.Prompts, p) {
			r.Prompts = append(r.Prompts, p)
		}
	}
	return r
}

// exportBudget is the [telemetry] timeout within what is left before the gate's deadline.
func exportBudget(timeout time.Duration, dl Deadline, now time.Time) time.Duration {
	if dl.At.IsZero() {
		return timeout
	}
	return max(0, min(timeout, dl.At.Sub(now)))
}

// Kind is what the gate answers a stop.
type Kind int

// The gate's answers.
const (
	Pass  Kind = iota // let the stop through
	Block             // send the agent back with the failures
	Halt              // end the session; the user sees the failures
)

// The causes of a judged block or halt, for the outcome log and telemetry.
const (
	CauseFailed     = "validators_failed" // a block: validators failed
	CauseMaxBlocks  = "max_blocks"        // a halt: still failing after max_blocks blocks
	CauseOnFailure  = "on_failure_halt"   // a halt: on_failure = "halt"
	CauseUnconfined = "unconfined"        // a halt: a validator could not be confined
	CauseVanished   = "mapping_vanished"  // a halt: an armed prompt lost its mapping
	CauseNoJudge    = "judge_unavailable" // a halt: a judge gave no verdict (on_unavailable = "halt")
)

// Verdict is the gate's decision on one stop.
type Verdict struct {
	Kind         Kind
	Reason       string                // all the stop tells: the agent a block's, the user a halt's or a pass's ("": nothing)
	Cause        string                // of a block or halt: a Cause* value
	Done         []queue.Entry         // entries to remove: all their validators passed, or their prompt is unmapped
	Blocks       int                   // consecutive blocked stops after this one
	Checks       []Check               // every validator, in mappings.toml order
	Reconciled   []outcome.Discrepancy // prompts judged although their entry was missing
	Observed     Kind                  // observe mode: what the stop would have been answered
	Observing    bool                  // judged in observe mode, pass or not
	relayDecided bool                  // decide asked the client how it takes this halt; else writeHalt asks its record
}

// Failed returns the checks that failed, in order.
func (v *Verdict) Failed() []Check {
	return slices.DeleteFunc(slices.Clone(v.Checks), func(c Check) bool { return c.Result.Passed })
}

// Check is one validator's run for the pending prompts that use it.
type Check struct {
	Validator *config.Validator
	Prompts   []string // pending prompts that use it, in mapping order
	Result    validator.Result
	Unchanged *reuse.Unchanged // reuse took it as passed, not run (Result says passed)
	Skipped   string           // why when_changed left it out (Result says passed; the log: neither)
}

// Decide decides the stop for `gate run` (nothing reused, no record, no client).
func Decide(ctx context.Context, cfg *config.Config, in *hook.Input, entries []queue.Entry) *Verdict {
	return (&judging{cfg: cfg, in: in, queued: entries, entries: entries}).decide(ctx)
}

// decide decides the stop and words all it answers, ending with the gate's inputs changed since arming and what reconciliation judged; nothing is added after.
func (s *judging) decide(ctx context.Context) *Verdict {
	if len(s.entries) == 0 {
		return &Verdict{Blocks: s.prior} // nothing armed: nothing judged, the count stands
	}
	v, changed, notes := s.check(ctx), "", ""
	if s.loaded != nil {
		changed = changes(s.loaded, s.queued, s.entries[len(s.queued):])
	}
	if s.rec != nil {
		v.Reconciled, notes = s.rec.Found, s.rec.Notes()
	}
	if _, note, _ := notRun(v); v.Kind == Pass && v.Reason == "" && note != "" {
		v.Reason = "stopgate: the stop passed." + note
	}
	switch {
	case v.Kind == Pass:
		v.Reason = strings.TrimSpace(v.Reason + "\n\n" + changed)
	case changed != "":
		v.Reason += "\n\n" + changed + notes
	default:
		v.Reason += notes
	}
	if v.Kind == Halt && s.ans != nil { // relay asks the client how it takes the halt (hook.Dialect.Halt)
		v.relayDecided = true
		maxBlocks := s.cfg.Settings.MaxBlocks
		o, once := s.ans.Halt(v.Reason, s.prior > maxBlocks)
		switch {
		case once: // one that hides its reason (Codex): once, a block for the model to relay, past max_blocks
			v.Kind, v.Blocks, v.Reason = Block, maxBlocks+1, o.Reason
		case o.Continue == nil: // one with no halt (Copilot CLI, Cursor): relayed as a block at every halt
			v.Blocks = max(s.prior, maxBlocks)
		}
	}
	return v
}

// check is the verdict of the entries' checks, worded; a lost mapping, a linked protected file or a hooks' .env halts.
func (s *judging) check(ctx context.Context) *Verdict {
	cfg := s.cfg
	if gone := slices.DeleteFunc(slices.Clone(s.entries), func(e queue.Entry) bool { return cfg.Mapping(e.Prompt) != nil }); len(gone) > 0 {
		return &Verdict{Kind: Halt, Reason: vanishedReason(cfg, gone), Cause: CauseVanished}
	}
	base := trustedBase(cfg, s.in)
	for _, why := range []string{linkedReason(cfg, base.Wall()), dotEnvReason(cfg, s.in)} {
		if why != "" {
			return halt(why)
		}
	}
	v := &Verdict{Observing: cfg.Settings.Mode == config.ModeObserve}
	checks, why, finish := s.run(ctx, base)
	v.Checks = checks
	if why != "" {
		v.Kind, v.Reason = Halt, why
		return v
	}
	finish()
	failed := v.Failed()
	v.Done = slices.DeleteFunc(slices.Clone(s.entries), func(e queue.Entry) bool {
		return slices.ContainsFunc(failed, func(c Check) bool { return slices.Contains(c.Prompts, e.Prompt) })
	})
	if len(failed) == 0 {
		return v
	}
	if why := unconfinedReason(cfg, v); why != "" {
		v.Kind, v.Reason, v.Cause = Halt, why, CauseUnconfined
		return v
	}
	halts := cfg.Settings.OnFailure == config.OnFailureHalt
	noJudge := slices.ContainsFunc(failed, func(c Check) bool { // a judge whose on_unavailable is "halt" gave no verdict
		return c.Result.Unavailable && c.Validator.Judge.OnUnavailable == config.OnFailureHalt
	})
	switch {
	case !v.Observing && noJudge:
		v.Kind, v.Cause = Halt, CauseNoJudge
	case v.Observing: // judged and shown to the user, never blocked
		v.Observed, v.Done = Block, s.entries
		if halts || noJudge {
			v.Observed = Halt
		}
	case halts:
		v.Kind, v.Cause = Halt, CauseOnFailure
	case s.prior >= cfg.Settings.MaxBlocks:
		v.Kind, v.Cause = Halt, CauseMaxBlocks
	default:
		v.Kind, v.Blocks, v.Cause = Block, s.prior+1, CauseFailed
	}
	v.Reason = checksReason(cfg, v, s.prior)
	return v
}

// run runs the checks reuse and when_changed leave in; finish records passes for reuse; why halts on a protected path
// a validator created (absent, it was not mounted).
func (s *judging) run(ctx context.Context, base *trust.Base) (checks []Check, why string, finish func()) {
	cfg, in := s.cfg, s.in
	checks, specs := plan(cfg, s.entries)
	defer scope(cfg, checks, specs, s.entries)()
	vs := make([]*config.Validator, len(checks))
	for i := range checks {
		vs[i] = checks[i].Validator
	}
	r, unchanged := reuse.Start(cfg, s.ru, vs, specs, s.dl.At)
	var run []validator.Spec
	for i := range specs {
		switch {
		case checks[i].Skipped != "": // not run, and not reused either
		case unchanged[i] != nil:
			checks[i].Unchanged = unchanged[i]
		default:
			run = append(run, specs[i])
		}
	}
	missing := validator.Missing(creatable(cfg, base.Shared))
	results := validator.Run(ctx, validator.Env{Dir: cfg.Root, Vars: []string{"CLAUDE_PROJECT_DIR=" + cfg.Root, "STOPGATE_SESSION_ID=" + in.SessionID, "STOPGATE_AGENT_ID=" + in.AgentID},
		OutputLimit: cfg.Settings.OutputBytes, Output: cfg.Settings.Output,
		Confine: confinement(cfg, base), Deadline: s.dl.At, DeadlineWhy: s.dl.why(), FailFast: cfg.Settings.FailFast,
		Ask: modelapi.Ask}, run)
	all := make([]validator.Result, len(checks)) // for reuse: a skip is no pass
	for i := range checks {
		if c := &checks[i]; c.Skipped != "" || c.Unchanged != nil {
			c.Result = validator.Result{Name: c.Validator.Name, Passed: true}
			all[i] = validator.Result{Name: c.Validator.Name, Passed: c.Skipped == ""}
		} else {
			c.Result, results = results[0], results[1:]
			all[i] = c.Result
		}
	}
	var appeared []string
	for _, p := range validator.Appeared(missing) {
		appeared = append(appeared, project.Display(cfg.Root, p))
	}
	return checks, keptHalt(cfg, appeared, ", ", "a validator created %s, which is protected and did not exist before it ran: "+
		"the code a validator runs must not change stopgate's checks or hooks. Look at it, remove it, then stop again."), func() { r.Finish(all, s.dl.At) }
}

// plan resolves each distinct validator of the pending prompts once, in mappings.toml order.
func plan(cfg *config.Config, entries []queue.Entry) ([]Check, []validator.Spec) {
	entryOf := map[string]queue.Entry{}
	for _, e := range entries {
		entryOf[e.Prompt] = e
	}
	var checks []Check
	var specs []validator.Spec
	for _, name := range cfg.Order {
		c := Check{Validator: cfg.Validators[name]}
		for _, m := range cfg.Mappings {
			if _, ok := entryOf[m.Prompt]; ok && slices.Contains(m.Validators, name) && !slices.Contains(c.Prompts, m.Prompt) {
				c.Prompts = append(c.Prompts, m.Prompt)
			}
		}
		if len(c.Prompts) > 0 {
			checks, specs = append(checks, c), append(specs, spec(cfg, &c, entryOf))
		}
	}
	return checks, specs
}

// spec is what the engine runs of c: the first prompt's variables, every prompt's baseline.
func spec(cfg *config.Config, c *Check, entryOf map[string]queue.Entry) validator.Spec {
	v, e := c.Validator, entryOf[c.Prompts[0]]
	s := validator.Spec{Name: v.Name, File: v.File, Run: v.Run, Timeout: v.Timeout}
	for _, x := range [][2]string{{string(validator.Contains), v.Contains}, {string(validator.NotContains), v.NotContains}, {string(validator.Regex), v.Regex}} {
		if x[1] != "" {
			s.Expect = append(s.Expect, validator.MustExpectation(validator.Kind(x[0]), x[1]))
		}
	}
	s.Env = []string{"STOPGATE_PROMPT=" + e.Prompt, "STOPGATE_PROMPT_PATH=" + cmp.Or(e.Path, cfg.PromptPath(e.Prompt))}
	if j := v.Judge; j != nil {
		s.Judge = &validator.Judge{Rubric: j.Rubric, API: j.API, Endpoint: j.Endpoint, Model: j.Model, KeyEnv: j.KeyEnv,
			Evidence: j.Evidence, MaxBytes: j.MaxBytes, CacheDir: filepath.Join(cfg.StateDir(), "judge")}
	}
	if v.IsDiff() {
		s.Diff, s.Skip = v.Diff.Check(), []string{cfg.StateDir()}
	}
	if v.IsDiff() || v.Judge != nil {
		q := queue.Open(cfg.StateDir())
		for _, p := range c.Prompts {
			s.Baselines = append(s.Baselines, q.BaselinePath(entryOf[p]))
		}
	}
	return s
}

// scope gives each check the files changed since its prompts were armed (validator.ChangedFilesVar) and marks when_changed skips.
func scope(cfg *config.Config, checks []Check, specs []validator.Spec, entries []queue.Entry) (done func()) {
	q := queue.Open(cfg.StateDir())
	records := make([]string, len(entries))
	for i, e := range entries {
		records[i] = q.BaselinePath(e)
	}
	changed := map[string][]string{} // prompt → changed files; nil: unknown
	for i, files := range baseline.ChangedSince(cfg.Root, records, []string{cfg.StateDir()}) {
		changed[entries[i].Prompt] = files
	}
	var written []string
	for i := range checks {
		c := &checks[i]
		var files []string
		known := true
		for _, p := range c.Prompts {
			known = known && changed[p] != nil
			files = append(files, changed[p]...)
		}
		path := ""
		if known {
			c.Skipped = skipped(cfg, c, changed)
			slices.Sort(files) // NUL-separated, at the scope's one path for c (reuse hashes it); "" when it cannot
			sum := sha256.Sum256([]byte(entries[0].Session + "\x00" + entries[0].AgentID + "\x00" + c.Validator.Name))
			path = filepath.Join(cfg.StateDir(), ".changed-"+hex.EncodeToString(sum[:8]))
			if atomicfile.Write(path, []byte(strings.Join(slices.Compact(files), "\x00")), atomicfile.Options{TempPrefix: ".changed-tmp-", NoSync: true}) != nil {
				path = ""
			}
			written = append(written, path)
		}
		specs[i].Env = append(specs[i].Env, validator.ChangedFilesVar+"="+path)
	}
	return func() {
		for _, p := range written {
			os.Remove(p)
		}
	}
}

// skipped says why c is not run: for each prompt, its mapping's or its own when_changed selects none changed.
func skipped(cfg *config.Config, c *Check, changed map[string][]string) string {
	var why []string
	for _, p := range c.Prompts {
		m := cfg.Mapping(p)
		switch {
		case !selects(m.WhenChanged, changed[p]):
			why = append(why, fmt.Sprintf("prompt %q's when_changed", p))
		case !selects(c.Validator.WhenChanged, changed[p]):
			why = append(why, "its when_changed")
		default:
			return ""
		}
	}
	slices.Sort(why)
	return "nothing matching " + strings.Join(slices.Compact(why), ", ") + " changed since the prompt was armed"
}

// selects reports whether pats (nil: every file; bad: the check runs) select one of files.
func selects(pats, files []string) bool {
	set, err := pattern.Compile(pats)
	if pats == nil || err != nil {
		return true
	}
	return slices.ContainsFunc(files, set.Match)
}

// changes names the gate's inputs changed since each entry was armed: a check rewritten to pass must say so.
func changes(c *config.Config, queued, reconciled []queue.Entry) string {
	byPath := map[string][]string{} // changed input → prompts armed before the change
	for i, e := range slices.Concat(queued, reconciled) {
		var paths []string // a queued entry's hashes compared, a reconciled one's ctimes with the read's time
		switch in := config.Inputs(e.Inputs); {
		case in == nil || i >= len(queued) && e.Created.IsZero():
		case i >= len(queued):
			paths = in.ChangedSince(c.Root, e.Created)
		default:
			paths = in.Changed(c.Root, c.Key(), c.File)
		}
		for _, path := range paths {
			byPath[path] = append(byPath[path], fmt.Sprintf("%q", e.Prompt))
		}
	}
	if len(byPath) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("stopgate: the checks' own inputs changed since their prompts were armed in this session:")
	for _, p := range slices.Sorted(maps.Keys(byPath)) {
		fmt.Fprintf(&b, "\n- %s (prompt %s)", p, strings.Join(byPath[p], ", "))
	}
	b.WriteString("\nThe checks ran as the files are now. If the agent changed them, review the change (git diff) before trusting this stop.")
	return b.String()
}

// failedCount counts the failed checks, and apart the judges with no verdict (no failure of the work).
func failedCount(v *Verdict) string {
	n, none := 0, 0
	for _, c := range v.Failed() {
		switch {
		case c.Result.Stopped: // fail_fast's: listed apart
		case c.Result.Unavailable:
			none++
		default:
			n++
		}
	}
	var parts []string
	if n > 0 || none == 0 {
		parts = append(parts, cli.Plural(n, "check", "checks")+" failed")
	}
	if none > 0 {
		parts = append(parts, cli.Plural(none, "judge", "judges")+" unavailable (no verdict: not a failure of the work)")
	}
	return strings.Join(parts, ", ")
}

// checksReason words a failed stop: head, the failures, close, the checks not run (never to read as passed), tail.
// A block's prefix and close are what package reconcile reads the record by.
func checksReason(cfg *config.Config, v *Verdict, prior int) string {
	n, close := failedCount(v), ""
	head := fmt.Sprintf("stopgate halted the session: %s after %d blocked stops.\n", n, prior)
	tail := "\nThe pending entries are kept: inspect them in " + cfg.Settings.StateDir + ", fix the work, and stop again."
	switch {
	case v.Observing:
		head = fmt.Sprintf("stopgate (observe mode) would have %s this stop: %s.\n", map[Kind]string{Block: "blocked", Halt: "halted"}[v.Observed], n)
		tail = "\nNothing was blocked: [settings] mode = \"observe\" records this in the outcome log (gate stats). Remove the line to enforce."
	case v.Kind == Block:
		head, tail = fmt.Sprintf("%s: %s.\n", hook.BlockPrefix, n), ""
		close = fmt.Sprintf(reconcile.BlockClose+" (Blocked stop %d of %d: after that the session halts and the user is told.)", v.Blocks, cfg.Settings.MaxBlocks)
	case v.Cause == CauseNoJudge:
		head = fmt.Sprintf("stopgate halted the session: a judge is unavailable, so the work could not be judged (on_unavailable = \"halt\"): %s.\n", n)
	case v.Cause == CauseOnFailure:
		head = fmt.Sprintf("stopgate halted the session: %s (on_failure = \"halt\").\n", n)
	}
	reused, skipped, stopped := notRun(v)
	return head + failures(cfg, v) + close + reused + skipped + stopped + tail
}

// notRun words the checks not run (never to read as passed): those reuse took, when_changed skipped, fail_fast stopped.
func notRun(v *Verdict) (reused, skipped, stopped string) {
	for _, c := range v.Checks {
		line := fmt.Sprintf(" prompt %s, validator %q: ", quoted(c.Prompts), c.Validator.Name)
		switch { // each a check not run, so one at most
		case c.Unchanged != nil:
			reused += "\n✔" + line + "unchanged since " + c.Unchanged.Since.Local().Format(time.TimeOnly) + " (passed)"
		case c.Skipped != "":
			skipped += "\n–" + line + "skipped, " + c.Skipped
		case c.Result.Stopped:
			stopped += "\n–" + line + "not run to its end"
		}
	}
	return paragraph("Not run again, nothing they depend on changed since they passed in this session:", reused),
		paragraph("Not run (when_changed):", skipped),
		paragraph("Not run (fail_fast = true: stopped at the first failure; they run again at the next stop):", stopped)
}

// paragraph is head and lines after a blank line; "" without lines.
func paragraph(head, lines string) string {
	if lines == "" {
		return ""
	}
	return "\n\n" + head + lines
}

// failures tells each failed check but those fail_fast stopped: prompt, validator, output, fix.
func failures(cfg *config.Config, v *Verdict) string {
	var b strings.Builder
	for _, c := range v.Failed() {
		r := c.Result
		if r.Stopped {
			continue
		}
		fmt.Fprintf(&b, "\n%s%s, validator %q", reconcile.FailurePrefix, quoted(c.Prompts), c.Validator.Name)
		if r.Problem != "" || r.ExitCode > 0 {
			fmt.Fprintf(&b, ": %s", r.Summary()) // how a run ended; a file's output says what is wrong
		}
		b.WriteString("\n")
		if r.Unavailable {
			b.WriteString("  The judge gave no verdict it could verify: the work was neither passed nor failed by it. Stopping again asks again.\n")
		}
		for _, line := range r.Shown(cfg.Settings.OutputLines, cfg.Settings.Output) {
			b.WriteString("  | " + line + "\n")
		}
		if c.Validator.Fix != "" && !r.Unavailable {
			b.WriteString("  Fix: " + c.Validator.Fix + "\n")
		}
	}
	return b.String()
}

func quoted(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// vanishedReason is the halt of armed prompts that lost their mapping: where it stood, how to clear one.
func vanishedReason(cfg *config.Config, gone []queue.Entry) string {
	var b strings.Builder
	file := filepath.Base(cfg.File)
	b.WriteString("stopgate halted the session: ")
	if len(gone) == 1 {
		b.WriteString("a prompt armed in this session has lost its mapping")
	} else {
		fmt.Fprintf(&b, "%d prompts armed in this session have lost their mapping", len(gone))
	}
	if len(cfg.Mappings) == 0 {
		fmt.Fprintf(&b, " (%s has no [[mapping]] at all)", file)
	}
	b.WriteString(", so their checks cannot run and the stop cannot pass.\n")
	q := queue.Open(cfg.StateDir())
	for _, e := range gone {
		fmt.Fprintf(&b, "\n✘ prompt %q", e.Prompt)
		if e.Line > 0 {
			fmt.Fprintf(&b, ": its [[mapping]] at %s:%d is gone", file, e.Line)
		} else {
			fmt.Fprintf(&b, ": %s has no [[mapping]] for it", file)
		}
		fmt.Fprintf(&b, "\n  armed entry: %s\n", project.Display(cfg.Root, q.EntryPath(e)))
	}
	fmt.Fprintf(&b, "\nRestore the mapping in %s (the agent must not edit its own gate). If it was removed on purpose, remove the armed entry above, then stop again.", file)
	return b.String()
}

// trustedBase is the stop's trusted base: what confinement mounts read-only, checked for hard links.
func trustedBase(cfg *config.Config, in *hook.Input) *trust.Base {
	b, _ := trust.For(trust.Project{Root: cfg.Root, Home: os.Getenv("HOME"), File: cfg.File, Config: cfg,
		Transcript: in.TranscriptPath, PluginRoot: os.Getenv("CLAUDE_PLUGIN_ROOT")}) // a parsed config has its runs
	return b
}

// creatable are the protected paths in the project a validator must not create (not the state dir).
func creatable(cfg *config.Config, ps []guard.Protected) []string {
	var out []string
	for _, p := range ps {
		path := filepath.FromSlash(p.Path)
		if (!p.Dir || p.Planted) && project.Display(cfg.Root, path) != path {
			out = append(out, path)
		}
	}
	return out
}

// linkedReason halts on a protected file with another name, which writes it around the guard ("": none).
func linkedReason(cfg *config.Config, set *guard.Set) string {
	var found []string
	for _, p := range set.Paths() {
		n := 0
		filepath.WalkDir(filepath.FromSlash(p.Path), func(path string, d fs.DirEntry, err error) error {
			if n++; err != nil || n > 10000 { // a folder's entries looked at
				return filepath.SkipAll
			}
			if d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0 && path == filepath.FromSlash(p.Path) {
				if n := links(path); n > 1 {
					found = append(found, fmt.Sprintf("%s (%d names)", project.Display(cfg.Root, path), n))
				}
			}
			return nil
		})
	}
	return keptHalt(cfg, found, ", ", "a protected file has another name (a hard link), which writes it around the guard and the validators' confinement: %s. "+
		"The agent must not link its own checks. Find the other names (find / -xdev -samefile FILE), remove them, then stop again.")
}

// keptHalt is a halt's reason: format of found joined by sep, then args; and that the entries are kept ("": none found).
func keptHalt(cfg *config.Config, found []string, sep, format string, args ...any) string {
	if len(found) == 0 {
		return ""
	}
	return "stopgate halted the session: " + fmt.Sprintf(format, append([]any{strings.Join(found, sep)}, args...)...) +
		" The pending entries are kept in " + cfg.Settings.StateDir + "."
}

// dotEnvReason halts on a client's .env setting the hooks' environment (trust.DotEnvHookEnv).
func dotEnvReason(cfg *config.Config, in *hook.Input) string {
	if in.Client == nil {
		return ""
	}
	var found []string
	for _, f := range trust.DotEnvHookEnv(in.Client.Name, cfg.Root, os.Getenv("HOME")) {
		found = append(found, f.Show+" "+f.What())
	}
	return keptHalt(cfg, found, "; ", "%s, which the client loads into its environment and hands every hook and validator: "+
		"it would choose the programs they run. The agent must not set them. Remove them from the file (or ask the user to set them in the shell "+
		"that starts the client), then stop again.")
}

// confinement is the bwrap run validators run in (nil: confine = false, or not required and nothing to protect).
func confinement(cfg *config.Config, base *trust.Base) *validator.Confinement {
	if cfg.Settings.Confine == config.ConfineOff {
		return nil
	}
	c := &validator.Confinement{Required: cfg.Settings.Confine == config.ConfineOn}
	if base.Empty() && !c.Required {
		return nil
	}
	c.ReadOnly, c.Writable, c.Env = base.Confinement()
	return c
}

// unconfinedReason halts on validators that had to be confined and could not be (only the user can fix it).
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
	return keptHalt(cfg, names, ", ", "[settings] confine = true, but the run validators cannot be confined: %[2]v. Not run, so not judged: %[1]s.\n\n"+
		"Install bubblewrap (apt-get install bubblewrap; scripts/install-sandbox-tools), or set confine = false in %[3]s to run them unconfined, then stop again.",
		why, filepath.Base(cfg.File))
}

// links is the count of hard links of the regular file at path; 1 when no other name could write it, or no such file.
func links(path string) uint64 {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() {
		return 1
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink <= 1 {
		return 1
	}
	const wOK = 2 // W_OK
	if err := syscall.Access(path, wOK); err == syscall.EROFS || err != nil && int(st.Uid) != os.Geteuid() {
		return 1
	}
	return uint64(st.Nlink)
}
