package gate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/queue"
)

type statusJSON struct {
	StateDir string        `json:"state_dir"`
	Pending  int           `json:"pending"`
	Scopes   []scopeJSON   `json:"scopes"`
	SetAside []setAsideRef `json:"set_aside"`
}

type scopeJSON struct {
	Session   string      `json:"session_id"`
	Agent     string      `json:"agent_id,omitempty"`
	AgentType string      `json:"agent_type,omitempty"`
	Blocks    int         `json:"blocks"`
	MaxBlocks int         `json:"max_blocks"`
	Entries   []entryJSON `json:"entries"`
}

type entryJSON struct {
	Prompt     string    `json:"prompt"`
	Trigger    string    `json:"trigger"`
	Path       string    `json:"path,omitempty"`
	Arms       int       `json:"arms"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
	AgeSeconds int64     `json:"age_seconds"`
}

type setAsideRef struct {
	Path string `json:"path"`
	Note string `json:"note,omitempty"`
}

// runStatus is `gate status`: what is pending, per scope, and what was set aside as unreadable.
func runStatus(env *cli.Env, args []string) error {
	fl := flags("status")
	configFile := configFlag(fl)
	asJSON := jsonFlag(fl)
	if err := parseFlags(env, fl, args); err != nil {
		return err
	}
	ws := workspaceOf(env, *configFile)
	dir := ws.stateDir()
	maxBlocks := config.DefaultMaxBlocks
	if cfg, _, _ := config.Inspect(ws.file, ws.root, config.FileOnly); cfg != nil {
		maxBlocks = cfg.Settings.MaxBlocks
	}
	st := statusJSON{StateDir: ws.rel(dir), Scopes: []scopeJSON{}, SetAside: []setAsideRef{}}

	if _, err := os.Stat(dir); err == nil {
		q := queue.Open(dir)
		scopes, bad, err := q.List()
		var held *queue.HeldError
		if errors.As(err, &held) {
			return cli.WithHint(err,
				"every stopgate hook waits for this lock: meanwhile a stop with prompts armed halts, and detect cannot arm",
				"end the process holding it; stopgate's own hooks hold it for milliseconds only")
		}
		if err != nil {
			return err
		}
		now := time.Now()
		for _, p := range scopes {
			s := scopeJSON{Session: p.Scope.Session, Agent: p.Scope.Agent, Blocks: p.Blocks, MaxBlocks: maxBlocks, Entries: []entryJSON{}}
			for _, e := range p.Entries {
				if e.AgentType != "" {
					s.AgentType = e.AgentType
				}
				s.Entries = append(s.Entries, entryJSON{
					Prompt: e.Prompt, Trigger: e.Trigger, Path: e.Path, Arms: e.Arms,
					Created: e.Created, Updated: e.Updated, AgeSeconds: int64(now.Sub(e.Created).Seconds()),
				})
			}
			st.Pending += len(p.Entries)
			st.Scopes = append(st.Scopes, s)
		}
		aside, err := q.SetAside()
		if err != nil {
			return err
		}
		notes := map[string]string{}
		for _, b := range bad {
			notes[b.Path] = b.Error.Error()
		}
		for _, a := range aside {
			st.SetAside = append(st.SetAside, setAsideRef{Path: ws.rel(a), Note: notes[a]})
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}

	if *asJSON {
		return printJSON(env, st)
	}
	printStatus(env, ws, st)
	return nil
}

func printStatus(env *cli.Env, ws workspace, st statusJSON) {
	w := env.Stdout
	if len(st.Scopes) == 0 {
		fmt.Fprintf(w, "%s: nothing pending\n", st.StateDir)
	} else {
		fmt.Fprintf(w, "%s: %s pending in %s\n", st.StateDir, cli.Plural(st.Pending, "prompt", "prompts"), cli.Plural(len(st.Scopes), "scope", "scopes"))
	}
	for _, s := range st.Scopes {
		who := "main thread"
		if s.Agent != "" {
			who = "agent " + s.Agent
			if s.AgentType != "" {
				who += " (" + s.AgentType + ")"
			}
		}
		line := fmt.Sprintf("\nsession %s, %s: %d pending", s.Session, who, len(s.Entries))
		if s.Blocks > 0 {
			line += fmt.Sprintf("; %s in a row (the session halts after %d)", cli.Plural(s.Blocks, "blocked stop", "blocked stops"), s.MaxBlocks)
		}
		fmt.Fprintln(w, line)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, e := range s.Entries {
			arms := ""
			if e.Arms > 1 {
				arms = fmt.Sprintf(" (armed %d times)", e.Arms)
			}
			fmt.Fprintf(tw, "  %s\t%s old\t%s%s\n", e.Prompt, age(time.Duration(e.AgeSeconds)*time.Second), armedBy(ws, e), arms)
		}
		tw.Flush()
	}
	if len(st.SetAside) > 0 {
		fmt.Fprintf(w, "\nset aside as unreadable (kept for inspection): %s\n", cli.Plural(len(st.SetAside), "file", "files"))
		for _, a := range st.SetAside {
			fmt.Fprintf(w, "  %s\n", a.Path)
		}
	}
}

// armedBy says what armed an entry, in the words of what the agent did.
func armedBy(ws workspace, e entryJSON) string {
	switch e.Trigger {
	case queue.TriggerRead:
		return "read " + ws.rel(e.Path)
	case queue.TriggerCommand:
		return "ran /" + config.Command(e.Prompt)
	case queue.TriggerPrompt:
		return "prompt /" + config.Command(e.Prompt)
	}
	return e.Trigger
}

// age writes a duration the way a person says it: 42s, 5m, 3h, 2d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// runClear is `gate clear SESSION`: a person drops what a session has
// armed, in every scope, and resets its block counts, recorded in the
// outcome log. The guard and the OS wall keep the agent from running it.
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
		// Recorded first: prompts dropped unrecorded would read as never armed.
		rec := outcome.Record{Time: now, Event: "clear", Session: session, Agent: p.Scope.Agent, Prompts: prompts,
			Checks: []outcome.Check{}, Decision: outcome.Cleared}
		if err := outcome.Append(dir, rec); err != nil {
			return err
		}
		if err := q.Remove(p.Scope, p.Entries); err != nil {
			return err
		}
		if err := q.SetBlocks(p.Scope, 0, ""); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "cleared %s: %s (a blocked-stop count of %d reset); should it stop again, what its transcript shows read is judged\n",
			p.Scope, cli.Plural(len(prompts), "prompt", "prompts"), p.Blocks)
	}
	return nil
}

// runVerdict is `gate verdict SESSION`, for CI after a headless run: exit 0
// only when the session's last stop passed with nothing armed since. The
// session must be named: the agent can append a passing one to the log.
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
		// A torn line may be the session's last stop.
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

// verdictOf judges session from the log's records and the prompts armed now, in one line.
func verdictOf(records []outcome.Record, session string, armed []string) (line string, passed bool) {
	var last *outcome.Record
	for i := range records {
		r := &records[i]
		// A subagent's stop counts only when the main thread has none.
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
