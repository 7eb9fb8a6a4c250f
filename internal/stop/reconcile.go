package stop

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/dialect"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/transcript"
)

// Transcript reconciliation: the queue is files the agent can reach, so
// the gate does not take it on trust. At each stop it reads the client's
// own record of the scope (dialect.Record: Claude Code's transcript_path or
// a subagent's agent_transcript_path, Codex's rollout, Gemini CLI's session
// file, Copilot CLI's events.jsonl) for the mapped prompts read or invoked
// there, as detect would have armed them, and judges every one whose entry
// is missing as if it were queued; the outcome log records each such
// discrepancy.
//
// Only what happened since the prompt last passed counts, so that a prompt
// whose checks passed and whose entry the gate removed is not armed again
// forever: a per-scope queue.Mark keeps the transcript offset up to which
// every prompt passed (advanced at a passing stop) and, for a stop that
// blocks on some prompts, the offset up to which each other one passed.
// The scan starts at the mark, so its cost follows what happened since,
// and is bounded by transcript.MaxScan.

// markEvery is how much unreconciled transcript without any mapped prompt
// a passing stop lets accumulate before it moves the mark: rereading it
// costs less than writing the mark on every stop.
const markEvery = 1 << 20

type reconciliation struct {
	scope   queue.Scope
	queue   string     // the state dir, as configured
	mark    queue.Mark // where this scan started
	stored  queue.Mark // as read from the state dir
	end     int64      // where this scan stopped
	seen    bool       // a mapped prompt was found
	missing []queue.Entry
	found   []outcome.Discrepancy
	// distrust says why the mark in the state dir was ignored ("": it
	// held, or there was none): everything since the start was judged.
	distrust string
	// unread is how many bytes since the mark the scan could not read
	// (transcript.MaxScan): every mapping was then judged (notes).
	unread int64
	// unknown says why what the record shows is unknown, so every mapping
	// was judged: the record the gate read at an earlier stop is gone, or
	// it never appeared. "" otherwise.
	unknown string
	// absent is set when the record was not there after the wait: the
	// mark then names it (absentMark), so later stops do not wait again.
	absent bool
	// behind is set when the record never showed the reply the stop
	// follows within the wait: what the rest of the turn armed is
	// unknown, so every mapping was judged.
	behind bool
	// blocks is how many of this turn's stops the gate blocked, as the
	// transcript records the client feeding them back: a count that a
	// deleted file in the state dir cannot reset.
	blocks int
}

// reconcile returns the entries the transcript says are missing from
// entries, or nil when there is no transcript. A transcript that exists
// but cannot be read is an error: the gate cannot tell what is armed.
//
// It asks the config by its methods, so that a stop with nothing to judge never
// parses mappings.toml (see Run).
//
// A record that is not on disk yet, or does not show the stopping turn yet,
// is waited for until wait (see awaitRecord).
func reconcile(cfg *config.Config, in *hook.Input, q *queue.Queue, scope queue.Scope, entries []queue.Entry, wait time.Time) (*reconciliation, error) {
	record, path, thread := recordOf(in, scope)
	if path == "" {
		return nil, nil
	}
	r := &reconciliation{scope: scope, queue: cfg.Settings.StateDir, stored: q.Mark(scope)}
	event := hook.Stop
	if scope.Agent != "" {
		event = hook.SubagentStop
	}
	from, distrust := trustedMark(r.stored, path)
	scan := func() (*transcript.Result, error) { return record.Scan(path, from.Offset, thread, in.Cwd) }
	res, caught, err := awaitRecord(scan, in, r.stored.Transcript != path, wait)
	// Only Claude Code's record of its stops is read (record.go); another
	// client's mark rests on its seal.
	if err == nil && distrust == "" && in.Client == nil {
		if distrust = recorded(from, res, event); distrust != "" {
			from = queue.Mark{Transcript: path}
			res, err = scan()
		}
	}
	r.behind = err == nil && !caught
	queued := map[string]bool{}
	for _, e := range entries {
		queued[e.Prompt] = true
	}
	if errors.Is(err, fs.ErrNotExist) {
		// What the record shows is unknown: one the gate read at an
		// earlier stop (the mark names it) is gone, deleted by the agent
		// perhaps with the queue; or one the client names never appeared,
		// where a read the queue lost would go unseen. Every mapped prompt
		// not queued is judged; only a passing stop forgets a gone record.
		r.mark = from
		r.mark.Passed = nil // offsets into a file that is gone: nothing passed since
		r.unknown = fmt.Sprintf("\n\nThe client's record of this session, %s, which stopgate read at an earlier stop, is gone; what it showed is unknown, so every mapped prompt was judged.", path)
		if r.absent = r.stored.Transcript != path || absentMark(r.stored, path); r.absent {
			r.unknown = fmt.Sprintf("\n\nThe client's record of this session, %s, does not exist: what the session read is unknown, so every mapped prompt was judged. A client that keeps no record of its sessions (Claude Code's --no-session-persistence) cannot be reconciled.", path)
		}
		if err := r.judgeAll(cfg, in, math.MaxInt64, queued, nil); err != nil {
			return nil, err
		}
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the transcript: %w", err)
	}
	r.distrust = distrust
	if res.Reset {
		from = queue.Mark{Transcript: path}
	}
	r.mark, r.end, r.unread = from, res.End, res.Skipped
	for _, b := range res.Blocks {
		if b.Event == event && strings.HasPrefix(b.Reason, blockPrefix) {
			r.blocks++
		}
	}

	latest, order, err := armedSince(cfg, res.Events, scope, from)
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
		// says, so that changes can tell what changed since.
		inputs, err := config.InputsOf(cfg.Root, cfg.File, cfg.Key(), m, cfg.Validator)
		if err != nil {
			return nil, err
		}
		r.missing = append(r.missing, queue.Entry{
			Prompt: m.Prompt, Session: scope.Session, AgentID: scope.Agent, AgentType: in.AgentType,
			Path: ev.Path, Trigger: trigger, Line: m.Line, Inputs: inputs, Created: ev.Time,
		})
		r.found = append(r.found, outcome.Discrepancy{
			Prompt: m.Prompt, Trigger: trigger, Path: ev.Path, Transcript: path, Offset: ev.Offset, UUID: ev.UUID,
		})
	}
	switch {
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

// relayFedBack reports whether the client's record of scope shows a halt
// relayed as a block (hook.HaltRelay) fed back in the current turn, or
// cannot be read.
func relayFedBack(in *hook.Input, scope queue.Scope) bool {
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

// recordOf returns the client's own record of scope (dialect.Record), the
// file it keeps it in and the thread of scope there.
func recordOf(in *hook.Input, scope queue.Scope) (dialect.Record, string, transcript.Thread) {
	record := dialect.RecordOf(in)
	path, thread := record.Where(in, scope.Agent)
	return record, path, thread
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

// recordWait bounds how long a stop waits for a client's record to catch
// up with it. Claude Code (2.1.328) queues its transcript appends and
// writes them every 100 ms, and does not wait for them before it runs the
// Stop hooks: the file of a short first turn was seen not to exist yet (6
// runs in 30), and an existing one to lack the turn's last lines, its
// final reply and often what came before it (about one stop in four, for
// some tens of milliseconds).
const recordWait = 3 * time.Second

// awaitRecord scans the record until it is there (when missing says a
// record not on disk is waited for) and current, or until min(wait,
// now+recordWait), scanning every 10 ms; it reports whether the record
// came to be current. A stop whose record caught up scans once.
func awaitRecord(scan func() (*transcript.Result, error), in *hook.Input, missing bool, wait time.Time) (*transcript.Result, bool, error) {
	until := time.Now().Add(recordWait)
	if !wait.IsZero() && wait.Before(until) {
		until = wait
	}
	for {
		res, err := scan()
		out := time.Now().After(until)
		switch {
		case errors.Is(err, fs.ErrNotExist) && missing && !out:
		case err != nil:
			return res, false, err
		case current(in, res, out):
			return res, true, nil
		case out:
			return res, false, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// current reports whether res shows the reply the stop follows, as the
// client hands it to the stop (last_assistant_message): its last reply
// since its last stop summary (transcript.Result.Last, Replied). Once the wait is out, the client has
// written what it queued (every 100 ms), and its last reply anywhere will
// do: a model that answered a block with nothing makes no new one, and the
// stop follows the reply before the block. Only Claude Code's record is
// read so; with no reply text (an empty one) there is nothing to look for.
func current(in *hook.Input, res *transcript.Result, out bool) bool {
	want := transcript.TrimReply(in.LastAssistantMessage)
	return in.Client != nil || want == "" || res.Last == want && (res.Replied || out)
}

// armedSince returns what the transcript's events armed since each prompt
// last passed: the latest event of each prompt, and the armed mappings
// once each, in mappings.toml order.
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
			if _, ok := latest[m.Prompt]; !ok {
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
func (r *reconciliation) judgeAll(cfg *config.Config, in *hook.Input, readFrom int64, queued map[string]bool, latest map[string]transcript.Event) error {
	full, err := cfg.Full()
	if err != nil {
		return err
	}
	for _, m := range full.Mappings {
		if queued[m.Prompt] || latest[m.Prompt].End > 0 || r.mark.Passed[m.Prompt] >= readFrom {
			continue
		}
		r.seen = true
		r.missing = append(r.missing, queue.Entry{
			Prompt: m.Prompt, Session: r.scope.Session, AgentID: r.scope.Agent, AgentType: in.AgentType,
			Trigger: queue.TriggerUnread, Line: m.Line,
		})
	}
	return nil
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

// notes is what a block or halt tells of the reconciliation: the checks
// run although their entry was missing, and why prompts that may not have
// been armed were judged.
func (r *reconciliation) notes() string {
	var b strings.Builder
	if len(r.found) > 0 {
		var names []string
		for _, d := range r.found {
			names = append(names, fmt.Sprintf("%q", d.Prompt))
		}
		how := "invoked"
		if r.found[0].Trigger == queue.TriggerRead {
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

// settle records the reconciliation in the verdict and moves the mark: to
// the end of the scan when the stop passes, else past each prompt that
// passed. The mark is written before the answer, so a gate killed later
// has only ever moved it past checks that passed.
func (r *reconciliation) settle(env *cli.Env, q *queue.Queue, v *Verdict) {
	v.Reconciled = r.found
	if r.unknown != "" {
		var next queue.Mark // a gone record is forgotten at a passing stop
		switch {
		case r.absent:
			next = queue.Mark{Transcript: r.mark.Transcript} // waited for once
		case v.Kind != Pass:
			return // gone: named until a stop passes
		}
		if next.Equal(r.stored) {
			return
		}
		if err := q.SetMark(r.scope, next); err != nil {
			fmt.Fprintf(env.Stderr, "gate: recording the reconciled transcript: %v\n", err)
		}
		return
	}
	next := queue.Mark{Transcript: r.mark.Transcript, Offset: r.mark.Offset}
	if v.Kind == Pass {
		if !r.seen && len(r.mark.Passed) == 0 && r.end-r.mark.Offset < markEvery && r.distrust == "" {
			return // nothing worth a write
		}
		next.Offset = r.end
	} else {
		next.Passed = maps.Collect(maps.All(r.mark.Passed))
		for _, e := range v.Done {
			next.Passed[e.Prompt] = r.end
		}
		if len(next.Passed) == 0 {
			next.Passed = nil
		}
	}
	// Compared with the stored mark, not where the scan started: the first
	// stop that does not pass records which record it read, so that a record
	// deleted later is known to have been there (vanished).
	if next.Equal(r.stored) && r.distrust == "" {
		return
	}
	seal, err := transcript.Seal(r.mark.Transcript, r.end)
	if err != nil {
		fmt.Fprintf(env.Stderr, "gate: sealing the reconciled transcript: %v\n", err)
		return // no mark: the next stop judges from the start, as if none was kept
	}
	next.End, next.Seal = r.end, seal
	if err := q.SetMark(r.scope, next); err != nil {
		fmt.Fprintf(env.Stderr, "gate: recording the reconciled transcript: %v\n", err)
	}
}
