// Package stop runs, at Stop and SubagentStop, the current mappings.toml's validators of the scope's pending
// prompts and answers a pass, a block or a halt. Once a prompt is armed every path ends in a block or a halt;
// exit 1 is for bad input and nothing armed. See docs/fail-closed.md.
package stop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/reconcile"
	"github.com/stopgate/stopgate/internal/reuse"
	"github.com/stopgate/stopgate/internal/telemetry"
)

// Events are the hook events the gate handles.
var Events = []string{hook.Stop, hook.SubagentStop}

// Hook judges one stop from env.Stdin against configFile ("": the project's) within the hook timeout (0: the client's).
func Hook(env *cli.Env, configFile string, opt client.Options, timeout time.Duration) (err error) {
	dl := DeadlineFrom(time.Now(), HookTimeout(opt.Client, timeout))
	ans := client.AnswerTo(env.Stdout, opt.Client) // until the input says whose
	defer func() {
		if p := recover(); p != nil {
			bug := &panicError{value: p, stack: debug.Stack()}
			err = (&judging{env: env, ans: &ans}).answer(nil, bug)
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
	s := &judging{env: env, in: in, ans: &ans, configFile: configFile, root: project.Root(env.Getenv, in.Cwd, env.Dir), dl: dl}
	s.scope = queue.Scope{Session: in.SessionID, Agent: in.AgentID}
	if in.HookEventName == hook.Stop {
		s.scope.Agent = "" // the main thread's stop, whatever else the input says
	}
	v, err := s.judge()
	return s.answer(v, err)
}

// judging is one Stop or SubagentStop being judged, and what it is decided from, all read before any
// validator runs (one may delete the state dir).
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
	var bug *panicError
	if errors.As(err, &bug) {
		s.env.Stderr.Write(bug.stack)
	}
	return s.writeHalt(failReason(err, s.entries))
}

// writeHalt writes a halt the verdict did not relay: as a block to a client that hides a halt's reason,
// unless its record shows one fed back this turn.
func (s *judging) writeHalt(reason string) error {
	if _, relays := s.ans.Halt("", false); relays && s.in != nil && !reconcile.RelayFedBack(s.in, s.scope) {
		o, _ := s.ans.Halt(reason, false)
		return s.ans.Write(o)
	}
	return s.ans.Write(hook.HaltSaid(reason))
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
	var intr *interruptedError
	if errors.As(context.Cause(ctx), &intr) && len(s.entries) > 0 {
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

// read reads the config, queue, block count and what the client's record shows armed; a verdict is the
// config's decision.
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
	var ps config.Problems
	if errors.As(err, &ps) {
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
	var u *unrecordedError
	if errors.As(err, &u) && u.verdict.Kind != Pass {
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

// Deadline is when the gate must answer: validators still running are killed (a killed hook passes); zero: no
// client waits (gate run).
type Deadline struct {
	At   time.Time     // when running validators are killed
	Hook time.Duration // the client's hook timeout it derives from
}

// HookTimeout is the registered (--timeout) hook timeout, else the client's default (Claude Code's).
func HookTimeout(name string, registered time.Duration) time.Duration {
	if registered > 0 {
		return registered
	}
	if c := client.Named(name); c != nil {
		return c.Timeout
	}
	return client.Claude.Timeout
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
		err := errNoTimeLeft
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
	r := outcome.Record{Time: now, Event: hook.Stop, Session: scope.Session, Agent: scope.Agent, Blocks: v.Blocks, Prompts: []string{}, Checks: []outcome.Check{},
		Reconciled: v.Reconciled, Cause: v.Cause, Observe: v.Observing}
	r.Decision = map[Kind]string{Pass: outcome.Pass, Block: outcome.Block, Halt: outcome.Halt}[v.Kind]
	if v.Observed != Pass { // observe mode: what it would have been
		r.Decision = map[Kind]string{Block: outcome.WouldBlock, Halt: outcome.WouldHalt}[v.Observed]
	}
	if scope.Agent != "" {
		r.Event = hook.SubagentStop
	}
	if v.Kind == Halt {
		r.Reason = cli.Clip(v.Reason, maxLoggedReason, "…")
	}
	addPrompt := func(p string) {
		if !slices.Contains(r.Prompts, p) {
			r.Prompts = append(r.Prompts, p)
		}
	}
	for _, c := range v.Checks {
		for _, p := range c.Prompts {
			addPrompt(p)
		}
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
		addPrompt(e.Prompt) // prompts no longer mapped have no checks
	}
	return r
}

// maxLoggedReason bounds a halt's reason, which quotes validator output, in the log.
const maxLoggedReason = 2000

// errNoTimeLeft is an export skipped: the answer comes first.
var errNoTimeLeft = errors.New("skipped: the validators ran up to the client's hook deadline, and the answer comes first")

// exportBudget is the [telemetry] timeout within what is left before the gate's deadline.
func exportBudget(timeout time.Duration, dl Deadline, now time.Time) time.Duration {
	if dl.At.IsZero() {
		return timeout
	}
	return max(0, min(timeout, dl.At.Sub(now)))
}
