package gate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/transcript"
)

// runClear is `gate clear SESSION`: a person drops what a session has
// armed, in every scope of it (the main thread and its subagents), and
// resets its blocked-stop counts. The transcript's reads so far count as
// decided (the reconciliation mark moves to its end), so the next stop
// does not judge them again; the outcome log records the decision as the
// person's. The agent cannot run it: the guard refuses it, and the OS
// wall refuses its Bash any write to the state dir.
func runClear(env *cli.Env, args []string) error {
	fl := flags("clear")
	configFile := fl.String("config", "", "the mappings `FILE` (default <root>/mappings.toml)")
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
	var mine []queue.Pending
	for _, p := range all {
		if p.Scope.Session == session {
			mine = append(mine, p)
		}
	}
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
		if err := q.Remove(p.Scope, p.Entries); err != nil {
			return err
		}
		if err := q.SetBlocks(p.Scope, 0); err != nil {
			return err
		}
		m, ok := decided(q.Mark(p.Scope), env.Getenv("HOME"), session)
		if ok {
			if err := q.SetMark(p.Scope, m); err != nil {
				return err
			}
		}
		rec := outcome.Record{Time: now, Event: "clear", Session: session, Agent: p.Scope.Agent, Prompts: prompts,
			Checks: []outcome.Check{}, Decision: outcome.Cleared}
		if err := outcome.Append(dir, rec); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "cleared %s: %s (a blocked-stop count of %d reset)\n", p.Scope, plural(len(prompts), "prompt", "prompts"), p.Blocks)
		if !ok {
			fmt.Fprintf(env.Stdout, "note: no transcript of %s found: a later stop of it may judge again what it shows read\n", p.Scope)
		}
	}
	return nil
}

// decided returns the mark that counts everything in the scope's
// transcript so far as decided: the transcript the mark names, else Claude
// Code's transcript of the session under home; false when there is none.
func decided(m queue.Mark, home, session string) (queue.Mark, bool) {
	path := m.Transcript
	if path == "" && home != "" {
		matches, _ := filepath.Glob(filepath.Join(home, ".claude", "projects", "*", session+".jsonl"))
		if len(matches) == 1 {
			path = matches[0]
		}
	}
	st, err := os.Stat(path)
	if path == "" || err != nil {
		return queue.Mark{}, false
	}
	// Sealed as the gate seals its own marks, or the gate would not trust it.
	seal, err := transcript.Seal(path, st.Size())
	if err != nil {
		return queue.Mark{}, false
	}
	return queue.Mark{Transcript: path, Offset: st.Size(), End: st.Size(), Seal: seal}, true
}
