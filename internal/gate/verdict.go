package gate

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/queue"
)

// runVerdict is `gate verdict SESSION`, for a CI job after a headless
// run (`claude -p … --output-format json`, then gate verdict with its
// session_id), whose client exits 0 whatever the gate
// decided: exit 0 only when the session's last stop passed with nothing
// armed since; else one line saying why not, and exit 1. Without SESSION
// it refuses: the outcome log's newest session is one the agent can
// append (on a client without the OS wall an invented passing session
// turned CI green while the real one halted), so CI passes the session
// the client reports.
func runVerdict(env *cli.Env, args []string) error {
	fl := flags("verdict")
	configFile := configFlag(fl)
	rest, err := parse(env, fl, args)
	if err != nil {
		return err
	}
	if len(rest) > 1 {
		return usageError("verdict", fmt.Errorf("unexpected argument %q", rest[1]))
	}
	if len(rest) == 0 {
		fmt.Fprintln(env.Stdout, "refused: name the session to judge, as the client reports it (claude -p --output-format json gives session_id): the outcome log's newest session is not taken, as the agent can append to the log")
		return cli.Exit(1)
	}
	ws := workspaceOf(env, *configFile)
	dir := ws.stateDir()
	records, skipped, err := outcome.Read(dir, time.Time{})
	if err != nil {
		return err
	}
	if skipped > 0 {
		// A torn or damaged line may be the session's last stop: the
		// verdict of an older one would be a guess.
		fmt.Fprintf(env.Stdout, "unknown: %s of %s/%s did not parse, and the last stop may be among them\n",
			cli.Plural(skipped, "line", "lines"), ws.rel(dir), outcome.FileName)
		return cli.Exit(1)
	}
	session := rest[0]
	scopes, _, err := queue.Open(dir).List()
	if err != nil {
		return fmt.Errorf("reading what is armed: %w", err)
	}
	var armed []string
	for _, p := range scopes {
		for _, e := range p.Entries {
			if p.Scope.Session == session && !slices.Contains(armed, e.Prompt) {
				armed = append(armed, e.Prompt)
			}
		}
	}
	line, passed := verdictOf(records, session, armed)
	fmt.Fprintln(env.Stdout, line)
	if !passed {
		return cli.Exit(1)
	}
	return nil
}

// verdictOf judges session from the outcome log's records and the prompts
// armed for it now: passed when its last stop passed and nothing is
// armed. line says which, in one line.
func verdictOf(records []outcome.Record, session string, armed []string) (line string, passed bool) {
	var last *outcome.Record
	for i := range records {
		r := &records[i]
		// The session's end is its main thread's stop; a subagent's counts
		// only when the main thread has none.
		if r.Session == session && (r.Agent == "" || last == nil || last.Agent != "") {
			last = r
		}
	}
	switch {
	case last == nil && len(armed) > 0:
		return fmt.Sprintf("never judged: session %s has %s armed and no stop of it was judged", session, strings.Join(armed, ", ")), false
	case last == nil:
		return fmt.Sprintf("never judged: no stop of session %s was judged (nothing was armed, or its stop halted before judging: see the client's output)", session), false
	case last.Decision == outcome.Cleared:
		return fmt.Sprintf("cleared: a person dropped the armed prompts of session %s (%s) unjudged", session, strings.Join(last.Prompts, ", ")), false
	case last.Decision != outcome.Pass:
		return fmt.Sprintf("%s: the last stop of session %s (%s) was %s: failed %s", last.Decision, session,
			last.Time.Local().Format("2006-01-02 15:04:05"), map[string]string{outcome.Block: "blocked", outcome.Halt: "halted",
				outcome.WouldBlock: "let through by observe mode, but would have been blocked", outcome.WouldHalt: "let through by observe mode, but would have been halted"}[last.Decision], failed(last)), false
	case len(armed) > 0:
		return fmt.Sprintf("still armed: session %s has %s armed since its last stop passed", session, strings.Join(armed, ", ")), false
	}
	return fmt.Sprintf("pass: the last stop of session %s passed (%s), nothing armed", session, strings.Join(last.Prompts, ", ")), true
}

// failed names the validators that failed in r.
func failed(r *outcome.Record) string {
	var out []string
	for _, c := range r.Checks {
		switch {
		case c.Passed:
		case c.Result == "failed":
			out = append(out, c.Name)
		default:
			out = append(out, c.Name+" ("+c.Result+")")
		}
	}
	if len(out) == 0 {
		return "no validator (it could not judge)"
	}
	return strings.Join(out, ", ")
}
