// Package stop is the Stop decision: at Stop and SubagentStop it runs the
// validators of the prompts pending for that scope and decides whether the
// agent may stop.
//
// Contract (stdin: one Stop or SubagentStop hook input object):
//
//	nothing pending                exit 0, no output
//	every validator passes         entries removed, exit 0, no output
//	a validator fails              {"decision":"block","reason":…}, exit 0: the
//	                               agent gets the failures and fixes and works on
//	after max_blocks blocked stops {"continue":false,"stopReason":…}, exit 0: the
//	  (or on_failure = "halt")     session halts and the user sees the failures
//	config that cannot be read     {"continue":false,"stopReason":"mappings.toml:LINE: …"}
//	config missing or empty, with  {"continue":false,"stopReason":…} naming what the record
//	  an entry pending or a prompt   shows; the rule for "can be a prompt" without a config
//	  taken up in the transcript     is reconcile.Missing
//	a reconciliation mark the      ignored: everything the transcript armed is judged, and
//	  transcript contradicts         a block or halt says why (package reconcile)
//	an armed prompt lost its       {"continue":false,"stopReason":…} naming the prompt
//	  mapping                        and the mappings.toml line that is gone
//	anything else going wrong      {"continue":false,"stopReason":…} naming what failed and
//	  while something is armed,      what the human should do: an I/O error, a lock held
//	  or may be                      past its deadline, an unreadable transcript, a signal
//	                                 (SIGTERM, SIGINT, SIGHUP: the validators' process
//	                                 groups are killed first), a recovered panic
//	bad hook input, or an error    one line on stderr, exit 1 (the client's non-blocking
//	  with nothing armed             error: the stop passes)
//
// This is the fail-closed rule: once a prompt is armed, no path of a stop
// ends without a block or a halt on stdout. Errors answer with a halt, not
// a block, because a gate that cannot keep its block count could otherwise
// block forever (the client then overrides it and the stop passes
// unjudged). The block count is also derived from the transcript, where
// the client records each block it fed back, so a validator that deletes
// the state dir cannot reset it.
//
// Without a config (mappings.toml missing, or blanks only) the record
// decides, whether or not the state dir survived: in a project that uses
// stopgate, a read of any Markdown file of the project, or a run of one of
// its commands, recorded in the transcript since the last passing stop
// halts (reconcile.Missing has the rule). The gate answers before the hook
// timeout the client was registered with (--timeout, else the client's
// default): validators still running at that deadline less a margin are
// killed and fail as timed out (deadline.go).
//
// Stop takes the session's main-thread entries; SubagentStop takes that
// agent's. Validators come from the current mappings.toml by prompt key:
// the gate never runs anything stored in the queue.
package stop

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/reconcile"
	"github.com/stopgate/stopgate/internal/reuse"
	"github.com/stopgate/stopgate/internal/telemetry"
)

// Events are the hook events the gate handles.
var Events = []string{hook.Stop, hook.SubagentStop}

// Hook judges one Stop or SubagentStop read from env.Stdin, in the dialect
// opt names, against the config at configFile ("" for the project's
// mappings.toml), and writes the answer to env.Stdout before the hook
// timeout the client was registered with (timeout; 0: the client's
// default; see deadline.go).
//
// A panic anywhere in it halts: judge recovers its own, knowing what is
// armed; one outside it (decoding, answering) cannot know, so it takes
// something to be armed (fail closed).
func Hook(env *cli.Env, configFile string, opt client.Options, timeout time.Duration) (err error) {
	dl := DeadlineFrom(time.Now(), HookTimeout(opt.Client, timeout))
	ans := client.AnswerTo(env.Stdout, opt.Client) // until the input says whose
	defer func() {
		if p := recover(); p != nil {
			bug := &panicError{value: p, stack: debug.Stack()}
			err = (&judging{env: env, ans: ans}).answer(nil, bug)
		}
	}()
	in, ans, err := decodeStop(env, opt)
	if in == nil {
		return err
	}
	s := &judging{env: env, in: in, ans: ans, configFile: configFile, root: project.Root(env.Getenv, in.Cwd, env.Dir), deadline: dl}
	s.scope = queue.Scope{Session: in.SessionID, Agent: in.AgentID}
	if in.HookEventName == hook.Stop {
		s.scope.Agent = "" // the main thread's stop, whatever else the input says
	}
	v, err := s.judge()
	return s.answer(v, err)
}

// judging is one Stop or SubagentStop being judged.
type judging struct {
	env        *cli.Env
	in         *hook.Input
	ans        hook.Answer // the answers to in, in its client's shape
	configFile string
	root       string
	scope      queue.Scope
	deadline   Deadline
	// clear is set once the gate knows nothing is armed for the scope:
	// the queue and the transcript were read and hold nothing to judge.
	// Until then an error is taken to hide something armed.
	clear bool
	armed []queue.Entry // what was found armed, for the reason of an error
}

// answer writes the verdict, or applies the fail-closed rule to err: a
// halt naming the failure, unless the gate knows nothing is armed.
func (s *judging) answer(v *Verdict, err error) error {
	if err == nil && v.Kind == Halt && !v.relayDecided {
		return s.writeHalt(v.Reason)
	}
	if err == nil {
		return v.write(s.ans)
	}
	if s.clear {
		return err // exit 1: nothing is armed, the stop may pass
	}
	fmt.Fprintf(s.env.Stderr, "gate: %v\n", err)
	var bug *panicError
	if errors.As(err, &bug) {
		s.env.Stderr.Write(bug.stack)
	}
	return s.writeHalt(failReason(err, s.armed))
}

// writeHalt writes a halt the stop could not judge as the client acts on
// it: a client that ends a session on a halt without showing why (Codex)
// first gets it relayed through the model as a block, unless the client's
// own record of the session shows the relay fed back this turn. The stop
// may not have read its block count, which says so (a full disk, a state
// dir gone, a config gone); a record it cannot read counts as relayed:
// the halt then ends the session, which at worst says less.
func (s *judging) writeHalt(reason string) error {
	if _, relays := s.ans.Halt("", false); relays && s.in != nil && !reconcile.RelayFedBack(s.in, s.scope) {
		o, _ := s.ans.Halt(reason, false)
		return s.ans.Write(o)
	}
	return s.ans.Write(hook.HaltSaid(reason))
}

// judge decides the stop: read what the verdict depends on, decide, apply
// the verdict to the state dir and record it; Hook then answers. A panic
// comes back as an error, so that answer still applies the rule.
func (s *judging) judge() (v *Verdict, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{value: p, stack: debug.Stack()}
		}
	}()
	// From here a signal (the client's timeout, a closed terminal) is an
	// answer too: it cancels the validators, if they run, and halts.
	ctx, release := interruptible()
	defer release()
	f, v, err := s.read()
	if f == nil {
		return v, err // the config decided: it cannot be read, or the record decides
	}
	v = decide(ctx, f)
	var intr *interruptedError
	if errors.As(context.Cause(ctx), &intr) && len(f.entries) > 0 {
		return nil, intr
	}
	if err := s.apply(f, v); err != nil {
		return nil, err
	}
	if len(v.Checks) > 0 || len(v.Done) > 0 { // a decision, not a stop with nothing pending
		v.record(s.env, f.q, s.scope, s.in, telemetry.Request{Config: f.cfg.Telemetry, Root: s.root}, s.deadline)
	}
	return v, nil
}

// read reads everything the verdict depends on: the config, the queue,
// the block count and the client's record. A stop the config decides (it
// cannot be read; it is missing or empty, and the record decides) gets
// its verdict and no facts.
func (s *judging) read() (*facts, *Verdict, error) {
	// The config, from the cache when it is current: most stops have
	// nothing to judge, and parsing a mappings.toml of thousands of
	// mappings at every one would cost more than the stop. Its errors are
	// the loader's, the ones `gate check` calls errors: they halt.
	loaded, err := config.Load(config.Path(s.root, s.configFile, s.env.Dir), s.root)
	if err != nil {
		if s.configFile == "" && errors.Is(err, fs.ErrNotExist) {
			return s.missingConfig()
		}
		return nil, halt(configReason(err)), nil
	}
	f := &facts{loaded: loaded, in: s.in, q: queue.Open(loaded.StateDir()), dl: s.deadline, client: &s.ans}
	if err := s.readQueue(f); errors.Is(err, errJudged) {
		s.clear = true // another registration of the client judged this stop: its answer stands
		return nil, &Verdict{}, nil
	} else if err != nil {
		return nil, nil, err
	}
	if len(f.entries) == 0 {
		if s.configFile == "" && reconcile.EmptyConfig(loaded.File) {
			return s.missingConfig() // an empty config maps nothing: the record decides
		}
		s.clear = true
		return f, nil, nil
	}
	// Only a stop with something to judge needs the whole config.
	if f.cfg, err = loaded.Full(); err != nil {
		return nil, halt(configReason(err)), nil
	}
	cfg, home := f.cfg, s.env.Getenv("HOME")
	f.ru = reuse.Use{Scope: s.scope, Trusted: cfg.Settings.Reuse == config.ReuseAuto, On: func() bool {
		on, _ := reuse.Policy(cfg, clientName(s.in), home)
		return on
	}}
	return f, nil, nil
}

// readQueue reads the scope's entries and block count, and adds what the
// client's record shows armed and the queue lacks (package reconcile).
func (s *judging) readQueue(f *facts) error {
	queued, bad, err := f.q.Snapshot(s.scope)
	if err != nil {
		return err
	}
	f.queued, f.entries, s.armed = queued, queued, queued
	for _, b := range bad {
		fmt.Fprintf(s.env.Stderr, "gate: set aside %s: %v\n", b.Path, b.Error)
	}
	// The count is ours, not derived from stop_hook_active: the client has
	// been seen to send false on repeated stops within one turn
	// (anthropics/claude-code#54360), which would let a loop run into the
	// client's own cap. It resets only on a passing stop or a halt.
	var at string
	if f.prior, at, err = f.q.Blocks(s.scope); err != nil {
		return err
	}
	if s.in.StopID != "" && at == s.in.StopID {
		return errJudged
	}
	if f.rec, err = reconcile.Run(f.loaded, s.in, f.q, s.scope, queued, s.deadline.At); err != nil || f.rec == nil {
		return err
	}
	f.entries = slices.Concat(queued, f.rec.Missing)
	s.armed = f.entries
	f.prior = max(f.prior, f.rec.Blocks) // the record remembers what a deleted file forgets
	return nil
}

// errJudged is a stop whose block another run of the gate counted: the
// client ran several registrations' hooks for it (hook.Input.StopID), and
// the first judged it. Its block stands; this run answers nothing.
var errJudged = errors.New("this stop was judged by another registration")

// missingConfig decides a stop whose project's mappings.toml is gone or
// empty by the client's record (reconcile.Missing).
func (s *judging) missingConfig() (*facts, *Verdict, error) {
	pending, taken, err := reconcile.Missing(s.root, s.in, s.scope, s.deadline.At)
	switch {
	case err != nil:
		return nil, nil, err
	case len(pending) > 0:
		s.armed = pending
		return nil, halt(pendingReason(len(pending))), nil
	case taken == "":
		s.clear = true
		return nil, &Verdict{}, nil
	}
	return nil, halt(takenUpReason(taken)), nil
}

func halt(reason string) *Verdict { return &Verdict{Kind: Halt, Reason: reason} }

// apply records the verdict in the state dir before the answer: the
// reconciliation mark (a mark not written costs the next stop a longer
// scan, never a check), then the queue and the block count, so that a
// gate killed after deciding errs towards checking again. What the
// verdict keeps armed is written back if a validator removed it. A stop
// that changes neither (most stops: nothing pending) writes nothing.
func (s *judging) apply(f *facts, v *Verdict) error {
	if f.rec != nil {
		if err := f.rec.Settle(f.q, v.Kind == Pass, v.Done); err != nil {
			fmt.Fprintf(s.env.Stderr, "gate: %v\n", err)
		}
	}
	var err error
	if len(v.Done) > 0 {
		err = f.q.Remove(s.scope, v.Done)
	}
	if err == nil && v.Kind != Pass {
		kept := slices.DeleteFunc(slices.Clone(f.queued), func(e queue.Entry) bool {
			return slices.ContainsFunc(v.Done, func(d queue.Entry) bool { return d.Prompt == e.Prompt })
		})
		err = f.q.Keep(s.scope, kept)
	}
	if err == nil && v.Blocks != f.prior {
		err = f.q.SetBlocks(s.scope, v.Blocks, s.in.StopID)
	}
	if err != nil {
		return &unrecordedError{err: err, verdict: v}
	}
	return nil
}

// write prints the answer of a verdict: a halt relay decided (else
// writeHalt) as that halt, not to be relayed again; a pass prints nothing
// unless it has something to tell the user.
func (v *Verdict) write(ans hook.Answer) error {
	switch {
	case v.Kind == Halt:
		return ans.Write(hook.HaltSaid(v.Reason))
	case v.Kind == Block:
		return ans.Write(hook.Block(v.Reason))
	case v.Reason != "":
		return ans.Write(hook.Output{SystemMessage: v.Reason})
	}
	return nil
}

// decodeStop decodes the stop in its client's dialect, with the writer of
// the answers to it. A stop from another client than the registration
// names halts: a hook registered wrong must never let a stop through
// unchecked. A stop the client sends but stopgate does not answer is no
// input and no error.
func decodeStop(env *cli.Env, opt client.Options) (*hook.Input, hook.Answer, error) {
	in, ans, err := client.Decode(env.Stdin, env.Stdout, opt, Events...)
	var mm *client.MismatchError
	switch {
	case errors.Is(err, client.ErrIgnored):
		return nil, ans, nil
	case errors.As(err, &mm) && mm.Input != nil:
		return nil, ans, hook.AnswerTo(env.Stdout, mm.Input).Write(hook.Halt("stopgate cannot check this stop: " + err.Error()))
	case err != nil:
		return nil, ans, err
	}
	return in, ans, nil
}

func configReason(err error) string {
	var ps config.Problems
	if errors.As(err, &ps) {
		return "stopgate cannot check this stop: mappings.toml has mistakes; fix them (the agent must not edit its own gate):\n" +
			strings.Join(ps.Errors().Lines(), "\n")
	}
	return "stopgate cannot check this stop: " + err.Error()
}
