package gate

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/queue"
)

// runClear is `gate clear SESSION`: a person drops what a session has
// armed, in every scope of it (the main thread and its subagents), and
// resets its blocked-stop counts; the outcome log records the decision as
// the person's. It is for a session that is over: should it stop again,
// the gate still judges what the client's record shows read since its
// last passing stop (only a passing stop moves the reconciliation mark,
// which the gate trusts only as far as the record agrees). The agent
// cannot run it: the guard refuses it, and the OS wall refuses its Bash
// any write to the state dir.
func runClear(env *cli.Env, args []string) error {
	fl := flags("clear")
	configFile := configFlag(fl)
	rest, err := parse(env, fl, args)
	if err != nil {
		return err
	}
	if len(rest) != 1 || rest[0] == "" {
		return usageError("clear", errors.New("name one session (gate status lists those with prompts armed)"))
	}
	session := rest[0]
	ws := workspaceOf(env, *configFile)
	dir := ws.stateDir()
	q := queue.Open(dir)
	all, _, err := q.List()
	if err != nil {
		return err
	}
	mine := slices.DeleteFunc(all, func(p queue.Pending) bool { return p.Scope.Session != session })
	if len(mine) == 0 {
		return cli.WithHint(fmt.Errorf("session %q has nothing armed in %s; nothing changed", session, ws.rel(dir)),
			"gate status lists the sessions that do")
	}
	now := time.Now().UTC()
	for _, p := range mine {
		var prompts []string
		for _, e := range p.Entries {
			prompts = append(prompts, e.Prompt)
		}
		// Recorded first: prompts dropped without a record would read as
		// never armed to gate verdict.
		rec := outcome.Record{Time: now, Event: "clear", Session: session, Agent: p.Scope.Agent, Prompts: prompts,
			Checks: []outcome.Check{}, Decision: outcome.Cleared}
		if err := outcome.Append(dir, rec); err != nil {
			return err
		}
		if err := q.Remove(p.Scope, p.Entries); err != nil {
			return err
		}
		if err := q.SetBlocks(p.Scope, 0); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "cleared %s: %s (a blocked-stop count of %d reset); should it stop again, what its transcript shows read is judged\n",
			p.Scope, cli.Plural(len(prompts), "prompt", "prompts"), p.Blocks)
	}
	return nil
}
