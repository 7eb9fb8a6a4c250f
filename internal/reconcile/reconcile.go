// Package reconcile checks the queue against the client's own record of a
// scope: the queue is files the agent can reach, so the gate does not take
// it on trust. At each stop it reads the client's record (client.Record:
// Claude Code's transcript_path or a subagent's agent_transcript_path,
// Codex's rollout, Gemini CLI's session file, Copilot CLI's events.jsonl)
// for the mapped prompts read or invoked there, as detect would have armed
// them, and has the stop judge every one whose entry is missing as if it
// were queued; the outcome log records each such discrepancy.
//
// Only what happened since the prompt last passed counts, so that a prompt
// whose checks passed and whose entry the gate removed is not armed again
// forever: a per-scope queue.Mark keeps the transcript offset up to which
// every prompt passed (advanced at a passing stop) and, for a stop that
// blocks on some prompts, the offset up to which each other one passed.
// The scan starts at the mark, so its cost follows what happened since,
// and is bounded by transcript.MaxScan. The marks' claims are checked
// against the client's record of its stops (record.go); without a config,
// the missing-config rule decides (missing.go).
package reconcile

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/transcript"
)

// markEvery is how much unreconciled transcript without any mapped prompt
// a passing stop lets accumulate before it moves the mark: rereading it
// costs less than writing the mark on every stop.
const markEvery = 1 << 20

// Reconciliation is what one stop's scan of the client's record found.
type Reconciliation struct {
	Missing []queue.Entry         // armed in the record, not queued: judged as if they were
	Found   []outcome.Discrepancy // the prompts of Missing the record shows, for the outcome log
	// Blocks is how many of this turn's stops the record shows the client
	// fed back a block of the gate's: a deleted file cannot reset it.
	Blocks int

	scope  queue.Scope
	queue  string     // the state dir, as configured
	mark   queue.Mark // where this scan started
	stored queue.Mark // as read from the state dir
	end    int64      // where this scan stopped
	seen   bool       // a mapped prompt was found
	// Why every mapping was judged, for Notes: distrust, why the stored
	// mark was ignored; unread, the bytes since the mark the scan could
	// not read (transcript.MaxScan); unknown, the record is gone or never
	// appeared; behind, it never showed the reply the stop follows in time.
	distrust string
	unread   int64
	unknown  string
	behind   bool
	// absent: the record was not there after the wait; the mark names it
	// (absentMark), so later stops do not wait again.
	absent bool
}

// Run reconciles the queued entries of scope with the client's record,
// or returns nil when the client names none. A record that exists but
// cannot be read is an error: the gate cannot tell what is armed. It asks
// cfg by its methods, so a stop with nothing to judge never parses
// mappings.toml; a record not caught up is waited for until wait.
func Run(cfg *config.Config, in *hook.Input, q *queue.Queue, scope queue.Scope, entries []queue.Entry, wait time.Time) (*Reconciliation, error) {
	record, path, thread := recordOf(in, scope)
	if path == "" {
		return nil, nil
	}
	r := &Reconciliation{scope: scope, queue: cfg.Settings.StateDir, stored: q.Mark(scope)}
	queued := map[string]bool{}
	for _, e := range entries {
		queued[e.Prompt] = true
	}
	res, from, err := r.scan(record, path, thread, in, wait)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		err = r.gone(cfg, in, path, from, queued)
		if err != nil {
			return nil, err
		}
		return r, nil
	case err != nil:
		return nil, fmt.Errorf("reading the transcript: %w", err)
	}
	event := eventOf(scope)
	for _, b := range res.Blocks {
		if b.Event == event && strings.HasPrefix(b.Reason, hook.BlockPrefix) {
			r.Blocks++
		}
	}
	latest, err := r.armed(cfg, in, res.Events, queued)
	switch {
	case err != nil:
	case r.behind:
		err = r.judgeAll(cfg, in, math.MaxInt64, queued, latest)
	case r.unread > 0:
		err = r.judgeAll(cfg, in, res.From, queued, latest)
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// scan reads the record from the mark, when the mark holds against it,
// else from its start; it waits for the record to catch up with the stop.
// Only Claude Code's record of its stops is read (record.go); another
// client's mark rests on its seal.
func (r *Reconciliation) scan(record client.Record, path string, thread transcript.Thread, in *hook.Input, wait time.Time) (*transcript.Result, queue.Mark, error) {
	from, distrust := trustedMark(r.stored, path)
	scan := func() (*transcript.Result, error) { return record.Scan(path, from.Offset, thread, in.Cwd) }
	res, caught, err := awaitRecord(scan, in, r.stored.Transcript != path, wait)
	if err == nil && distrust == "" && in.Client == nil {
		if distrust = recorded(from, res, eventOf(r.scope)); distrust != "" {
			from = queue.Mark{Transcript: path}
			res, err = scan()
		}
	}
	r.behind = err == nil && !caught
	if err != nil {
		return nil, from, err
	}
	r.distrust = distrust
	if res.Reset {
		from = queue.Mark{Transcript: path}
	}
	r.mark, r.end, r.unread = from, res.End, res.Skipped
	return res, from, nil
}

// gone judges every mapped prompt not queued when what the record shows
// is unknown: one the gate read at an earlier stop (the mark names it) is
// gone, deleted by the agent perhaps with the queue; or one the client
// names never appeared, where a read the queue lost would go unseen. Only
// a passing stop forgets a gone record.
func (r *Reconciliation) gone(cfg *config.Config, in *hook.Input, path string, from queue.Mark, queued map[string]bool) error {
	r.mark = from
	r.mark.Passed = nil // offsets into a file that is gone: nothing passed since
	r.unknown = fmt.Sprintf("\n\nThe client's record of this session, %s, which stopgate read at an earlier stop, is gone; what it showed is unknown, so every mapped prompt was judged.", path)
	if r.absent = r.stored.Transcript != path || absentMark(r.stored, path); r.absent {
		r.unknown = fmt.Sprintf("\n\nThe client's record of this session, %s, does not exist: what the session read is unknown, so every mapped prompt was judged. A client that keeps no record of its sessions (Claude Code's --no-session-persistence) cannot be reconciled.", path)
	}
	return r.judgeAll(cfg, in, math.MaxInt64, queued, nil)
}

// armed adds an entry for each prompt the record's events armed since it
// last passed and the queue lacks, and returns the latest event of each
// prompt armed.
func (r *Reconciliation) armed(cfg *config.Config, in *hook.Input, events []transcript.Event, queued map[string]bool) (map[string]transcript.Event, error) {
	latest, order, err := armedSince(cfg, events, r.scope, r.mark)
	if err != nil {
		return nil, err
	}
	r.seen = len(latest) > 0
	for _, m := range order {
		ev := latest[m.Prompt]
		if queued[m.Prompt] {
			continue
		}
		trigger := map[string]string{transcript.Read: queue.TriggerRead, transcript.Command: queue.TriggerCommand, transcript.Prompt: queue.TriggerPrompt}[ev.Kind]
		// Its inputs as detect records them; armed when the transcript
		// says, so that the stop can tell what changed since.
		inputs, err := config.InputsOf(cfg.Root, cfg.File, cfg.Key(), m, cfg.Validator)
		if err != nil {
			return nil, err
		}
		r.add(m, in, queue.Entry{Path: ev.Path, Trigger: trigger, Inputs: inputs, Created: ev.Time})
		r.Found = append(r.Found, outcome.Discrepancy{
			Prompt: m.Prompt, Trigger: trigger, Path: ev.Path, Transcript: r.mark.Transcript, Offset: ev.Offset, UUID: ev.UUID,
		})
	}
	return latest, nil
}

// eventOf is the hook event of scope's stops.
func eventOf(scope queue.Scope) string {
	if scope.Agent != "" {
		return hook.SubagentStop
	}
	return hook.Stop
}

// RelayFedBack reports whether the client's record of scope shows a halt
// relayed as a block (hook.HaltRelay) fed back in the current turn, or
// cannot be read.
func RelayFedBack(in *hook.Input, scope queue.Scope) bool {
	record, path, thread := recordOf(in, scope)
	if path == "" {
		return true
	}
	res, err := record.Scan(path, 0, thread, in.Cwd)
	if err != nil {
		return true
	}
	for _, b := range res.Blocks {
		if strings.HasPrefix(b.Reason, hook.RelayPrefix) {
			return true
		}
	}
	return false
}

// recordOf returns the client's own record of scope (client.Record), the
// file it keeps it in and the thread of scope there.
func recordOf(in *hook.Input, scope queue.Scope) (client.Record, string, transcript.Thread) {
	record := client.RecordOf(in, shellReads)
	path, thread := record.Where(in, scope.Agent)
	return record, path, thread
}

// shellReads is what a shell command in a record read: the analysis detect
// asks (guard.ShellReads), from the session's cwd, which is the project's
// root for every client that records one.
func shellReads(cmd, cwd string) []string {
	return guard.ShellReads(cmd, cwd, cwd, os.Getenv("HOME"))
}

// trustedMark returns the mark to reconcile path from: m when it was
// written against this transcript as it still is (trust, see queue.Mark),
// else none, which judges everything the transcript armed; why says what
// did not hold. A mark of another transcript is none without a word: the
// session moved on to a new file.
func trustedMark(m queue.Mark, path string) (from queue.Mark, why string) {
	none := queue.Mark{Transcript: path}
	if m.Transcript != path || absentMark(m, path) {
		return none, ""
	}
	switch seal, err := transcript.Seal(path, m.End); {
	case m.Seal == "":
		why = "it carries no seal of the transcript"
	case m.Reach() > m.End:
		why = fmt.Sprintf("it claims offset %d past the end it was written at (%d)", m.Reach(), m.End)
	case errors.Is(err, transcript.ErrPastEnd):
		why = fmt.Sprintf("its end (%d) lies past the end of the transcript", m.End)
	case err != nil:
		why = "the transcript could not be read against it: " + err.Error()
	case seal != m.Seal:
		why = "the transcript before its end is not what it was written against"
	default:
		return m, ""
	}
	return none, why
}

// absentMark reports whether m is the mark a stop leaves for a record path
// that was not there: it names the record and claims nothing, so a later
// stop judges everything whether the record has appeared or not, and does
// not wait for it again.
func absentMark(m queue.Mark, path string) bool {
	return m.Transcript == path && m.Offset == 0 && m.End == 0 && m.Seal == "" && len(m.Passed) == 0
}

// armedSince returns what the transcript's events armed since each prompt
// last passed: the latest event of each prompt (with the time of the
// first), and the armed mappings once each, in mappings.toml order.
func armedSince(cfg *config.Config, events []transcript.Event, scope queue.Scope, from queue.Mark) (map[string]transcript.Event, []*config.Mapping, error) {
	latest := map[string]transcript.Event{}
	var order []*config.Mapping
	for _, ev := range events {
		maps, err := Armed(cfg, ev, scope)
		if err != nil {
			return nil, nil, err
		}
		for _, m := range maps {
			if ev.End <= from.Passed[m.Prompt] {
				continue
			}
			if first, ok := latest[m.Prompt]; ok {
				// Armed since its first event: a validator rewritten
				// between two reads changed after it was armed.
				ev.Time = first.Time
			} else {
				order = append(order, m)
			}
			latest[m.Prompt] = ev
		}
	}
	sort.Slice(order, func(i, j int) bool { return order[i].Line < order[j].Line })
	return latest, order, nil
}

// judgeAll adds every mapped prompt not already judged, for a scan that
// could not read all the transcript since the mark: what the unread part
// armed is unknown, so everything it could have armed is judged, except
// prompts that passed after it.
func (r *Reconciliation) judgeAll(cfg *config.Config, in *hook.Input, readFrom int64, queued map[string]bool, latest map[string]transcript.Event) error {
	full, err := cfg.Full()
	if err != nil {
		return err
	}
	for _, m := range full.Mappings {
		if queued[m.Prompt] || latest[m.Prompt].End > 0 || r.mark.Passed[m.Prompt] >= readFrom {
			continue
		}
		r.seen = true
		r.add(&m, in, queue.Entry{Trigger: queue.TriggerUnread})
	}
	return nil
}

// add adds e, armed by m, to Missing as detect would have queued it.
func (r *Reconciliation) add(m *config.Mapping, in *hook.Input, e queue.Entry) {
	e.Prompt, e.Session, e.AgentID, e.AgentType, e.Line = m.Prompt, r.scope.Session, r.scope.Agent, in.AgentType, m.Line
	r.Missing = append(r.Missing, e)
}

// Armed returns the mappings a transcript event arms, by detect's rules: a Read of
// a mapped .md file inside the project, a slash command, or a typed /name
// (a prompt only the main thread receives).
func Armed(cfg *config.Config, ev transcript.Event, scope queue.Scope) ([]*config.Mapping, error) {
	switch ev.Kind {
	case transcript.Read:
		return cfg.MatchRead(ev.Path)
	case transcript.Command:
		return cfg.MatchCommand(ev.Command)
	case transcript.Prompt:
		if scope.Agent == "" {
			if name := hook.SlashCommand(ev.Text); name != "" {
				return cfg.MatchCommand(name)
			}
		}
	}
	return nil, nil
}

// Notes is what a block or halt tells of the reconciliation: the checks
// run although their entry was missing, and why prompts that may not have
// been armed were judged.
func (r *Reconciliation) Notes() string {
	var b strings.Builder
	if len(r.Found) > 0 {
		var names []string
		for _, d := range r.Found {
			names = append(names, fmt.Sprintf("%q", d.Prompt))
		}
		how := "invoked"
		if r.Found[0].Trigger == queue.TriggerRead {
			how = "read"
		}
		fmt.Fprintf(&b, "\n\nChecked although missing from the queue in %s: prompt %s (the transcript shows it %s). The queue is stopgate's, not the agent's: leave it alone.",
			r.queue, strings.Join(names, ", "), how)
	}
	if r.unread > 0 {
		fmt.Fprintf(&b, "\n\nstopgate reads at most the last %d MiB of a transcript at a stop, and %.1f MiB written since the last passing stop went unread; what they armed is unknown, so every mapped prompt was judged.",
			transcript.MaxScan>>20, float64(r.unread)/(1<<20))
	}
	if r.behind {
		fmt.Fprintf(&b, "\n\nThe client's record of this session did not show the reply this stop follows in time (%v at most): what the rest of the turn armed is unknown, so every mapped prompt was judged.", recordWait)
	}
	switch {
	case r.unknown != "":
		b.WriteString(r.unknown)
	case r.distrust != "":
		fmt.Fprintf(&b, "\n\nstopgate ignored the reconciliation mark in %s: %s. Everything the transcript armed was judged. The state dir is stopgate's, not the agent's: leave it alone.", r.queue, r.distrust)
	}
	return b.String()
}

// Settle moves the mark once the stop is decided: to the end of the scan
// when it passed, else past each prompt whose checks all passed (done).
// The mark is written before the answer, so a gate killed later has only
// ever moved it past checks that passed. A mark it cannot write costs the
// next stop a longer scan, never a check: the error is for stderr.
func (r *Reconciliation) Settle(q *queue.Queue, passed bool, done []queue.Entry) error {
	next, ok := r.next(passed, done)
	if !ok {
		return nil
	}
	if r.unknown == "" {
		seal, err := transcript.Seal(r.mark.Transcript, r.end)
		if err != nil {
			return fmt.Errorf("sealing the reconciled transcript: %w", err) // no mark: the next stop judges from the start
		}
		next.End, next.Seal = r.end, seal
	}
	if err := q.SetMark(r.scope, next); err != nil {
		return fmt.Errorf("recording the reconciled transcript: %w", err)
	}
	return nil
}

// next is the mark after the stop, and whether it is worth a write.
func (r *Reconciliation) next(passed bool, done []queue.Entry) (queue.Mark, bool) {
	if r.unknown != "" {
		var next queue.Mark // a gone record is forgotten at a passing stop
		switch {
		case r.absent:
			next = queue.Mark{Transcript: r.mark.Transcript} // waited for once
		case !passed:
			return next, false // gone: named until a stop passes
		}
		return next, !next.Equal(r.stored)
	}
	next := queue.Mark{Transcript: r.mark.Transcript, Offset: r.mark.Offset}
	if passed {
		if !r.seen && len(r.mark.Passed) == 0 && r.end-r.mark.Offset < markEvery && r.distrust == "" {
			return next, false // nothing worth a write
		}
		next.Offset = r.end
	} else {
		next.Passed = maps.Collect(maps.All(r.mark.Passed))
		for _, e := range done {
			next.Passed[e.Prompt] = r.end
		}
		if len(next.Passed) == 0 {
			next.Passed = nil
		}
	}
	// Compared with the stored mark, not where the scan started: the first
	// stop that does not pass records which record it read, so that a record
	// deleted later is known to have been there (vanished).
	return next, !next.Equal(r.stored) || r.distrust != ""
}
