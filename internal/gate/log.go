package gate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"

	"github.com/stopgate/stopgate/internal/atomicfile"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/report"
	"github.com/stopgate/stopgate/internal/telemetry"
)

// runLog is `gate log`: the gate's decisions, one line each, oldest first.
func runLog(env *cli.Env, args []string) error {
	fl := flags("log")
	asJSON := jsonFlag(fl)
	export := fl.Bool("export", false, "send the decisions over OTLP, as [telemetry] says, instead of printing them (a backfill)")
	timeout := fl.Duration("timeout", time.Minute, "with --export: give up after `D`")
	d, err := readDecisions(env, fl, args)
	switch {
	case err != nil:
		return err
	case *export:
		return exportLog(env, d, *timeout)
	case *asJSON:
		enc := json.NewEncoder(env.Stdout)
		for _, r := range d.records {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	case len(d.records) == 0:
		fmt.Fprint(env.Stdout, d.none)
	}
	p := paletteFor(env)
	for _, r := range d.records {
		decision := r.Decision
		if decision != outcome.Pass {
			decision = p.red(decision)
		}
		checks := each(r.Checks, func(c outcome.Check) string {
			how := cli.Duration(c.Duration())
			switch {
			case c.Skipped:
				return "– " + c.Name + " skipped"
			case c.Reused && c.Since != nil:
				how = "unchanged since " + c.Since.Local().Format(time.TimeOnly)
			}
			return p.mark(c.Passed) + " " + c.Name + " " + how + resultOf(c)
		})
		line := fmt.Sprintf("%s  %s %s  %s  %s: %s", r.Time.Local().Format("2006-01-02 15:04:05"), r.Session, r.Scope(), decision, strings.Join(r.Prompts, ", "), strings.Join(checks, ", "))
		if len(r.Reconciled) > 0 {
			// The transcript armed them, the queue had no entry: worth a look.
			missing := each(r.Reconciled, func(d outcome.Discrepancy) string { return d.Prompt })
			line += p.red(" [not in the queue, found in the transcript: " + strings.Join(missing, ", ") + "]")
		}
		fmt.Fprintln(env.Stdout, line)
	}
	return nil
}

// each is f of every x, leaving out the empty ones.
func each[T any](xs []T, f func(T) string) []string {
	var out []string
	for _, x := range xs {
		if s := f(x); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// mapped is f of every x.
func mapped[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// resultOf is a failed check's result when it is more than "failed".
func resultOf(c outcome.Check) string {
	if c.Passed || c.Result == "failed" {
		return ""
	}
	return " (" + c.Result + ")"
}

// runStats is `gate stats`: rates, attempts, sessions, slow validators, reuse and judges.
func runStats(env *cli.Env, args []string) error {
	fl := flags("stats")
	asJSON := jsonFlag(fl)
	d, err := readDecisions(env, fl, args)
	if err != nil {
		return err
	}
	st := outcome.Summarize(d.records)
	w := env.Stdout
	switch {
	case *asJSON:
		st.Validators = st.Slowest() // --json lists them slowest first
		return printJSON(env, st)
	case st.Decisions == 0:
		fmt.Fprint(w, d.none)
		return nil
	}
	fmt.Fprintf(w, "%s from %s to %s: %d passed, %d blocked, %d halted", cli.Plural(st.Decisions, "decision", "decisions"),
		st.From.Local().Format("2006-01-02 15:04"), st.To.Local().Format("2006-01-02 15:04"), st.Passes, st.Blocks, st.Halts)
	if st.Cleared > 0 {
		fmt.Fprintf(w, ", %d cleared by a person", st.Cleared)
	}
	fmt.Fprintln(w)
	prompts := tableOf([]string{"prompt", "checked", "passed", "pass rate", "attempts to pass (avg / max)", "still failing"}, st.Prompts, func(p outcome.PromptStats) []string {
		attempts := "-"
		if p.Resolved > 0 {
			attempts = fmt.Sprintf("%.1f / %d", p.AttemptsAvg, p.AttemptsMax)
		}
		return []string{p.Prompt, strconv.Itoa(p.Checked), strconv.Itoa(p.Passed), rate(p.Passed, p.Checked), attempts, strconv.Itoa(p.Unresolved)}
	})
	validators := tableOf([]string{"validator", "runs", "passed", "pass rate", "median", "max"}, st.Validators, func(v outcome.ValidatorStats) []string {
		return []string{v.Name, strconv.Itoa(v.Runs), strconv.Itoa(v.Passed), rate(v.Passed, v.Runs), cli.Duration(v.Median()), cli.Duration(v.Max())}
	})
	for _, rows := range [][][]string{prompts, validators} {
		if len(rows) > 1 {
			fmt.Fprintln(w)
			table(w, rows)
		}
	}
	observeStats(w, st)
	sessionStats(w, st)
	judgeStats(w, st)
	return nil
}

// tableOf is a table of header and a row of each x that row makes one of (non-nil).
func tableOf[T any](header []string, xs []T, row func(T) []string) [][]string {
	rows := [][]string{header}
	for _, x := range xs {
		if r := row(x); r != nil {
			rows = append(rows, r)
		}
	}
	return rows
}

// sessionStats are gate stats' lines on sessions, slow validators and reuse.
func sessionStats(w io.Writer, st outcome.Stats) {
	blocked := slices.DeleteFunc(slices.Clone(st.Sessions), func(s outcome.SessionStats) bool { return s.Blocks+s.Halts == 0 })
	fmt.Fprintf(w, "\nsessions: %d, %d with blocked stops", len(st.Sessions), len(blocked))
	if len(blocked) > 0 {
		fmt.Fprintf(w, "; most blocked: %s", strings.Join(each(blocked[:min(5, len(blocked))], func(s outcome.SessionStats) string {
			halts := ""
			if s.Halts > 0 {
				halts = ", " + cli.Plural(s.Halts, "halt", "halts")
			}
			return fmt.Sprintf("%s (%s%s)", s.Session, cli.Plural(s.Blocks, "block", "blocks"), halts)
		}), ", "))
	}
	fmt.Fprintln(w)
	if slowest := st.Slowest(); len(slowest) > 0 {
		fmt.Fprintf(w, "slowest validators (longest run): %s\n", strings.Join(each(slowest[:min(5, len(slowest))], func(v outcome.ValidatorStats) string {
			return v.Name + " " + cli.Duration(v.Max())
		}), ", "))
	}
	if st.Reused > 0 {
		by := each(st.Validators, func(v outcome.ValidatorStats) string {
			if v.Reused == 0 {
				return ""
			}
			return fmt.Sprintf("%s %d× (%s)", v.Name, v.Reused, cli.Duration(v.Saved))
		})
		fmt.Fprintf(w, "time saved by reuse: %s, %s not run again: %s\n", cli.Duration(st.Saved), cli.Plural(st.Reused, "check", "checks"), strings.Join(by, ", "))
	}
}

// judgeStats is gate stats' line on what the judges cost.
func judgeStats(w io.Writer, st outcome.Stats) {
	spent := func(s outcome.Spend) string {
		out := fmt.Sprintf("%s (%d answered from the cache), %d input + %d output tokens", cli.Plural(s.Asked, "request", "requests"), s.Cached, s.InputTokens, s.OutputTokens)
		if s.CostUSD > 0 {
			out += fmt.Sprintf(", $%.4f", s.CostUSD)
		}
		return out
	}
	by := each(st.Validators, func(v outcome.ValidatorStats) string {
		if v.Asked+v.Cached == 0 {
			return ""
		}
		return v.Name + ": " + spent(v.Spend)
	})
	if st.Asked+st.Cached > 0 {
		fmt.Fprintf(w, "judges: %s; %s\n", spent(st.Spend), strings.Join(by, "; "))
	}
}

// observeStats is the observe-mode part of gate stats: the would-block rates.
func observeStats(w io.Writer, st outcome.Stats) {
	row := func(name string, observed, wouldBlock int) []string {
		if observed == 0 {
			return nil
		}
		return []string{name, strconv.Itoa(observed), strconv.Itoa(wouldBlock), rate(wouldBlock, observed)}
	}
	header := []string{"", "observed", "would block", "would-block rate"}
	prompts := tableOf(append([]string{"prompt"}, header[1:]...), st.Prompts, func(p outcome.PromptStats) []string { return row(p.Prompt, p.Observed, p.WouldBlock) })
	if len(prompts) == 1 {
		return
	}
	fmt.Fprintf(w, "\nobserve mode: %s would have been blocked and %d halted; observe mode let every one through\n", cli.Plural(st.WouldBlock, "stop", "stops"), st.WouldHalt)
	table(w, prompts)
	fmt.Fprintln(w)
	table(w, tableOf(append([]string{"validator"}, header[1:]...), st.Validators, func(v outcome.ValidatorStats) []string { return row(v.Name, v.Observed, v.WouldBlock) }))
}

func rate(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", (n*100+of/2)/of)
}

func table(w io.Writer, rows [][]string) {
	for _, r := range aligned(rows) {
		fmt.Fprintln(w, strings.Join(r, "  "))
	}
}

// aligned pads rows into columns: the first left-aligned, the rest right.
func aligned(rows [][]string) [][]string {
	widths := map[int]int{}
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	out := make([][]string, len(rows))
	for j, r := range rows {
		for i, cell := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			out[j] = append(out[j], pad+cell)
			if i == 0 {
				out[j][0] = cell + pad
			}
		}
	}
	return out
}

// decisions are the log's records since --since, and what to say when there are none.
type decisions struct {
	records []outcome.Record
	none    string
	ws      workspace
}

// readDecisions parses the flags of log, stats or report and reads the outcome log.
func readDecisions(env *cli.Env, fl *flag.FlagSet, args []string) (*decisions, error) {
	sinceFlag := fl.String("since", "", "only decisions since `D`: a duration (90m, 24h, 7d) or a date (2006-01-02, RFC 3339)")
	ws, _, err := parseVerb(env, fl, args, 0)
	if err != nil {
		return nil, err
	}
	since, err := parseSince(*sinceFlag, time.Now())
	if err != nil {
		return nil, usageError(fl.Name(), err)
	}
	dir := ws.stateDir()
	records, skipped, err := outcome.Read(dir, since)
	if err != nil {
		return nil, err
	}
	if skipped > 0 {
		fmt.Fprintf(env.Stderr, "gate: skipped %s of the outcome log that did not parse\n", cli.Plural(skipped, "line", "lines"))
	}
	none := "no gate decisions in " + ws.rel(dir) + "/" + outcome.FileName
	if !since.IsZero() {
		none += " since " + since.Local().Format("2006-01-02 15:04:05")
	}
	return &decisions{records: records, none: none + "\n", ws: ws}, nil
}

// parseSince reads --since: a duration back from now (also d, w), or a date.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for unit, days := range map[string]int{"d": 1, "w": 7} {
		if n, err := strconv.Atoi(strings.TrimSuffix(s, unit)); err == nil && n >= 0 && strings.HasSuffix(s, unit) {
			return now.AddDate(0, 0, -n*days), nil
		}
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q is neither a duration (90m, 24h, 7d) nor a date (2006-01-02)", s)
}

// runReport is `gate report`: the outcome log as one HTML page, rendered, then written at once.
func runReport(env *cli.Env, args []string) error {
	fl := flags("report")
	out := fl.String("out", "stopgate-report.html", "the HTML `FILE` to write")
	d, err := readDecisions(env, fl, args)
	if err != nil {
		return err
	}
	var page bytes.Buffer
	if err := report.Write(&page, d.records, "stopgate: "+filepath.Base(d.ws.root), time.Now()); err != nil {
		return err
	}
	if err := atomicfile.Write(absFrom(env.Dir, *out), page.Bytes(), atomicfile.Options{TempPrefix: ".stopgate-report-", Perm: 0o644, NoSync: true}); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	fmt.Fprintf(env.Stdout, "wrote %s: %s\n", *out, cli.Plural(len(d.records), "decision", "decisions"))
	return nil
}

// exportLog is `gate log --export`: the decisions sent over OTLP in one request.
func exportLog(env *cli.Env, d *decisions, timeout time.Duration) error {
	cfg, err := d.ws.load()
	if err != nil {
		return err
	}
	if !telemetry.Enabled(cfg.Telemetry, env.Getenv) {
		return cli.WithHint(errors.New("telemetry is off: nothing to export to"), "[telemetry] enabled = true in mappings.toml turns it on; gate check shows where it goes")
	}
	if len(d.records) == 0 {
		fmt.Fprint(env.Stdout, d.none)
		return nil
	}
	req := telemetry.Request{Config: cfg.Telemetry, Root: d.ws.root, Deadline: timeout, Records: d.records}
	if err := telemetry.Send(req); err != nil {
		return fmt.Errorf("telemetry export failed: %w", err)
	}
	fmt.Fprintf(env.Stdout, "exported %s: %s\n", cli.Plural(len(d.records), "decision", "decisions"), telemetry.Describe(cfg.Telemetry, env.Getenv))
	return nil
}

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
	asJSON := jsonFlag(fl)
	ws, _, err := parseVerb(env, fl, args, 0)
	if err != nil {
		return err
	}
	dir := ws.stateDir()
	maxBlocks := config.DefaultMaxBlocks
	if cfg, _, _ := config.Inspect(ws.file, ws.root, config.FileOnly); cfg != nil {
		maxBlocks = cfg.Settings.MaxBlocks
	}
	st := statusJSON{StateDir: ws.rel(dir), Scopes: []scopeJSON{}}
	q := queue.Open(dir)
	scopes, bad, err := q.List()
	if _, held := errors.AsType[*queue.HeldError](err); held {
		return cli.WithHint(err, "every stopgate hook waits for this lock: meanwhile a stop with prompts armed halts, and detect cannot arm",
			"end the process holding it; stopgate's own hooks hold it for milliseconds only")
	}
	if err != nil {
		return err
	}
	now := time.Now()
	for _, p := range scopes {
		s := scopeJSON{Session: p.Scope.Session, Agent: p.Scope.Agent, Blocks: p.Blocks, MaxBlocks: maxBlocks, Entries: []entryJSON{}}
		for _, e := range p.Entries {
			s.AgentType = cmp.Or(e.AgentType, s.AgentType)
			s.Entries = append(s.Entries, entryJSON{Prompt: e.Prompt, Trigger: e.Trigger, Path: e.Path, Arms: e.Arms,
				Created: e.Created, Updated: e.Updated, AgeSeconds: int64(now.Sub(e.Created).Seconds())})
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
	st.SetAside = mapped(aside, func(a string) setAsideRef { return setAsideRef{Path: ws.rel(a), Note: notes[a]} })
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
		if s.Agent != "" && s.AgentType != "" {
			who = "agent " + s.Agent + " (" + s.AgentType + ")"
		} else if s.Agent != "" {
			who = "agent " + s.Agent
		}
		fmt.Fprintf(w, "\nsession %s, %s: %d pending", s.Session, who, len(s.Entries))
		if s.Blocks > 0 {
			fmt.Fprintf(w, "; %s in a row (the session halts after %d)", cli.Plural(s.Blocks, "blocked stop", "blocked stops"), s.MaxBlocks)
		}
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, e := range s.Entries {
			// What armed it, in the words of what the agent did.
			by := cmp.Or(map[string]string{queue.TriggerRead: "read " + ws.rel(e.Path), queue.TriggerCommand: "ran /" + config.Command(e.Prompt),
				queue.TriggerPrompt: "prompt /" + config.Command(e.Prompt)}[e.Trigger], e.Trigger)
			if e.Arms > 1 {
				by += fmt.Sprintf(" (armed %d times)", e.Arms)
			}
			fmt.Fprintf(tw, "  %s\t%s old\t%s\n", e.Prompt, age(time.Duration(e.AgeSeconds)*time.Second), by)
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

// runClear is `gate clear SESSION`: a person drops a session's armed prompts and block
// counts, recorded in the log (the guard and the wall keep the agent from it).
func runClear(env *cli.Env, args []string) error {
	fl := flags("clear")
	ws, rest, err := parseVerb(env, fl, args, -1)
	if err != nil {
		return err
	}
	if len(rest) != 1 || rest[0] == "" {
		return usageError("clear", errors.New("name one session (gate status lists those with prompts armed)"))
	}
	session, dir := rest[0], ws.stateDir()
	q := queue.Open(dir)
	all, _, err := q.List()
	if err != nil {
		return err
	}
	mine := slices.DeleteFunc(all, func(p queue.Pending) bool { return p.Scope.Session != session })
	if len(mine) == 0 {
		return cli.WithHint(fmt.Errorf("session %q has nothing armed in %s; nothing changed", session, ws.rel(dir)), "gate status lists the sessions that do")
	}
	now := time.Now().UTC()
	for _, p := range mine {
		prompts := each(p.Entries, func(e queue.Entry) string { return e.Prompt })
		// Recorded first: prompts dropped unrecorded would read as never armed.
		rec := outcome.Record{Time: now, Event: "clear", Session: session, Agent: p.Scope.Agent, Prompts: prompts, Checks: []outcome.Check{}, Decision: outcome.Cleared}
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

// runVerdict is `gate verdict SESSION`, for CI: exit 0 only when the session's last stop
// passed, nothing armed since; the session is named, as the agent can append to the log.
func runVerdict(env *cli.Env, args []string) error {
	fl := flags("verdict")
	ws, rest, err := parseVerb(env, fl, args, 1)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		fmt.Fprintln(env.Stdout, "refused: name the session to judge, as the client reports it (claude -p --output-format json gives session_id): the outcome log's newest session is not taken, as the agent can append to the log")
		return cli.Exit(1)
	}
	dir := ws.stateDir()
	records, skipped, err := outcome.Read(dir, time.Time{})
	if err != nil {
		return err
	}
	if skipped > 0 {
		// A torn line may be the session's last stop.
		fmt.Fprintf(env.Stdout, "unknown: %s of %s/%s did not parse, and the last stop may be among them\n", cli.Plural(skipped, "line", "lines"), ws.rel(dir), outcome.FileName)
		return cli.Exit(1)
	}
	scopes, _, err := queue.Open(dir).List()
	if err != nil {
		return fmt.Errorf("reading what is armed: %w", err)
	}
	var armed []string
	for _, p := range scopes {
		for _, e := range p.Entries {
			if p.Scope.Session == rest[0] && !slices.Contains(armed, e.Prompt) {
				armed = append(armed, e.Prompt)
			}
		}
	}
	line, passed := verdictOf(records, rest[0], armed)
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
		failed := each(last.Checks, func(c outcome.Check) string {
			if c.Passed {
				return ""
			}
			return c.Name + resultOf(c)
		})
		return fmt.Sprintf("%s: the last stop of session %s (%s) was %s: failed %s", last.Decision, session,
			last.Time.Local().Format("2006-01-02 15:04:05"), map[string]string{outcome.Block: "blocked", outcome.Halt: "halted",
				outcome.WouldBlock: "let through by observe mode, but would have been blocked", outcome.WouldHalt: "let through by observe mode, but would have been halted"}[last.Decision],
			cmp.Or(strings.Join(failed, ", "), "no validator (it could not judge)")), false
	case len(armed) > 0:
		return fmt.Sprintf("still armed: session %s has %s armed since its last stop passed", session, strings.Join(armed, ", ")), false
	}
	return fmt.Sprintf("pass: the last stop of session %s passed (%s), nothing armed", session, strings.Join(last.Prompts, ", ")), true
}
