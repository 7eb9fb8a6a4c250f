package stop

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/telemetry"
)

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

// decision is the verdict's name in the outcome log (observe mode: what it would have been).
func (v *Verdict) decision() string {
	if v.Observed != Pass {
		return map[Kind]string{Block: outcome.WouldBlock, Halt: outcome.WouldHalt}[v.Observed]
	}
	return map[Kind]string{Pass: outcome.Pass, Block: outcome.Block, Halt: outcome.Halt}[v.Kind]
}

// outcome is the verdict as a log record.
func (v *Verdict) outcome(scope queue.Scope, now time.Time) outcome.Record {
	r := outcome.Record{Time: now, Event: hook.Stop, Session: scope.Session, Agent: scope.Agent, Blocks: v.Blocks, Prompts: []string{}, Checks: []outcome.Check{},
		Reconciled: v.Reconciled, Cause: v.Cause, Observe: v.Observing, Decision: v.decision()}
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
