// Package reconcile checks the queue, which the agent can reach, against the client's own record (client.Record):
// a mapped prompt the record shows armed since it last passed (queue.Mark) and not queued is judged as if it
// were. Without a config, Missing decides. See docs/reconciliation.md.
package reconcile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/transcript"
	"github.com/stopgate/stopgate/internal/trust"
)

// markEvery is how much transcript without a mapped prompt a passing stop rereads rather than mark.
const markEvery = 1 << 20

// Reconciliation is what one stop's scan of the client's record found.
type Reconciliation struct {
	Missing []queue.Entry         // armed in the record, not queued: judged as if they were
	Found   []outcome.Discrepancy // the prompts of Missing the record shows, for the outcome log
	Blocks  int                   // the gate's blocks the record shows fed back this turn

	scope    queue.Scope
	queued   map[string]bool // the prompts queued or in Missing
	queue    string          // the state dir, as configured
	mark     queue.Mark      // where this scan started
	stored   queue.Mark      // as read from the state dir
	end      int64           // where this scan stopped
	seen     bool            // a mapped prompt was found
	distrust string          // why the stored mark was ignored (this and the rest: for Notes)
	unread   int64           // bytes since the mark not read (transcript.MaxScan)
	unknown  string          // the record is gone or never appeared
	behind   bool            // it never showed the reply the stop follows in time
	absent   bool            // not there after the wait: the mark says so (absentMark)
}

// Run reconciles scope's queued entries with the client's record (nil: none; with an error, only that counts), waiting until wait.
func Run(cfg *config.Config, in *hook.Input, q *queue.Queue, scope queue.Scope, entries []queue.Entry, wait time.Time) (*Reconciliation, error) {
	record, path, thread := recordOf(in, scope)
	if path == "" {
		return nil, nil
	}
	r := &Reconciliation{scope: scope, queue: cfg.Settings.StateDir, stored: q.Mark(scope), queued: map[string]bool{}}
	for _, e := range entries {
		r.queued[e.Prompt] = true
	}
	res, from, err := r.scan(record, path, thread, in, wait)
	switch {
	case errors.Is(err, fs.ErrNotExist): // gone, or never was: every mapped prompt not queued is judged
		r.mark = from
		r.mark.Passed = nil // offsets into a file that is gone: nothing passed since
		r.unknown = fmt.Sprintf("\n\nThe client's record of this session, %s, which stopgate read at an earlier stop, is gone; what it showed is unknown, so every mapped prompt was judged.", path)
		if r.absent = r.stored.Transcript != path || absentMark(r.stored, path); r.absent {
			r.unknown = fmt.Sprintf("\n\nThe client's record of this session, %s, does not exist: what the session read is unknown, so every mapped prompt was judged. A client that keeps no record of its sessions (Claude Code's --no-session-persistence) cannot be reconciled.", path)
		}
		return r, r.judgeAll(cfg, in, math.MaxInt64)
	case err != nil:
		return nil, fmt.Errorf("reading the transcript: %w", err)
	}
	event := EventOf(scope)
	for _, b := range res.Blocks {
		if b.Event == event && strings.HasPrefix(b.Reason, hook.BlockPrefix) {
			r.Blocks++
		}
	}
	err = r.armed(cfg, in, res.Events)
	switch {
	case err != nil:
	case r.behind:
		err = r.judgeAll(cfg, in, math.MaxInt64)
	case r.unread > 0:
		err = r.judgeAll(cfg, in, res.From)
	}
	return r, err
}

// scan reads the record, once caught up, from the mark when it holds (another client's: by its seal alone).
func (r *Reconciliation) scan(record client.Record, path string, thread transcript.Thread, in *hook.Input, wait time.Time) (*transcript.Result, queue.Mark, error) {
	from, distrust := trustedMark(r.stored, path)
	scan := func() (*transcript.Result, error) { return record.Scan(path, from.Offset, thread, in.Cwd) }
	res, caught, err := awaitRecord(scan, in, r.stored.Transcript != path, wait)
	if err == nil && distrust == "" && in.Client == nil {
		if distrust = recorded(from, res, EventOf(r.scope)); distrust != "" {
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

// armed adds, in mapping order, an entry for each prompt the events arm since it last passed and not queued:
// its latest event, with the first's time.
func (r *Reconciliation) armed(cfg *config.Config, in *hook.Input, events []transcript.Event) error {
	latest := map[string]transcript.Event{}
	var order []*config.Mapping
	for _, ev := range events {
		maps, err := Armed(cfg, ev, r.scope)
		if err != nil {
			return err
		}
		for _, m := range maps {
			if ev.End <= r.mark.Passed[m.Prompt] {
				continue
			}
			if first, ok := latest[m.Prompt]; ok {
				ev.Time = first.Time
			} else {
				order = append(order, m)
			}
			latest[m.Prompt] = ev
		}
	}
	r.seen = len(latest) > 0
	slices.SortFunc(order, func(a, b *config.Mapping) int { return a.Line - b.Line })
	for _, m := range order {
		ev := latest[m.Prompt]
		if r.queued[m.Prompt] {
			continue
		}
		trigger := map[string]string{transcript.Read: queue.TriggerRead, transcript.Command: queue.TriggerCommand, transcript.Prompt: queue.TriggerPrompt}[ev.Kind]
		inputs, err := config.InputsOf(cfg.Root, cfg.File, cfg.Key(), m, cfg.Validator) // as detect records them
		if err != nil {
			return err
		}
		r.add(m, in, queue.Entry{Path: ev.Path, Trigger: trigger, Inputs: inputs, Created: ev.Time})
		r.Found = append(r.Found, outcome.Discrepancy{Prompt: m.Prompt, Trigger: trigger, Path: ev.Path, Transcript: r.mark.Transcript, Offset: ev.Offset, UUID: ev.UUID})
	}
	return nil
}

// EventOf is the hook event of scope's stops.
func EventOf(scope queue.Scope) string {
	return map[bool]string{false: hook.Stop, true: hook.SubagentStop}[scope.Agent != ""]
}

// RelayFedBack reports whether scope's record shows a relayed halt fed back this turn, or cannot be read.
func RelayFedBack(in *hook.Input, scope queue.Scope) bool {
	record, path, thread := recordOf(in, scope)
	if path == "" {
		return true
	}
	res, err := record.Scan(path, 0, thread, in.Cwd)
	return err != nil || slices.ContainsFunc(res.Blocks, func(b transcript.Block) bool { return strings.HasPrefix(b.Reason, hook.RelayPrefix) })
}

// recordOf returns the client's record of scope, its file and the thread.
func recordOf(in *hook.Input, scope queue.Scope) (client.Record, string, transcript.Thread) {
	record := client.Of(in).Record(func(cmd, cwd string) []string { // what a shell command read, as detect judges it
		return guard.ShellReads(cmd, cwd, cwd, os.Getenv("HOME"))
	})
	path, thread := record.Where(in, scope.Agent)
	return record, path, thread
}

// trustedMark returns m when written against path as it still is, else none and why (another file's: no why).
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

// absentMark reports whether m is the claimless mark left for a record that was not there.
func absentMark(m queue.Mark, path string) bool {
	return m.Transcript == path && m.Offset == 0 && m.End == 0 && m.Seal == "" && len(m.Passed) == 0
}

// judgeAll adds every mapped prompt not queued or added yet, but those that passed after readFrom.
func (r *Reconciliation) judgeAll(cfg *config.Config, in *hook.Input, readFrom int64) error {
	full, err := cfg.Full()
	if err != nil {
		return err
	}
	for _, m := range full.Mappings {
		if r.queued[m.Prompt] || r.mark.Passed[m.Prompt] >= readFrom {
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
	r.Missing, r.queued[m.Prompt] = append(r.Missing, e), true
}

// Armed returns the mappings a transcript event arms, by detect's rules (a typed /name only on the main thread).
func Armed(cfg *config.Config, ev transcript.Event, scope queue.Scope) ([]*config.Mapping, error) {
	if ev.Kind == transcript.Read {
		return cfg.MatchRead(ev.Path)
	}
	if name := commandOf(ev, scope); name != "" {
		return cfg.MatchCommand(name)
	}
	return nil, nil
}

// commandOf is the command ev runs: a Command's, or a typed /name on the main thread; "" for none.
func commandOf(ev transcript.Event, scope queue.Scope) string {
	switch {
	case ev.Kind == transcript.Command:
		return ev.Command
	case ev.Kind == transcript.Prompt && scope.Agent == "":
		return hook.SlashCommand(ev.Text)
	}
	return ""
}

// Notes is what a block or halt tells of what reconciliation judged, and why.
func (r *Reconciliation) Notes() string {
	var b strings.Builder
	if len(r.Found) > 0 {
		var names []string
		for _, d := range r.Found {
			names = append(names, fmt.Sprintf("%q", d.Prompt))
		}
		how := map[bool]string{true: "read", false: "invoked"}[r.Found[0].Trigger == queue.TriggerRead]
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

// Settle moves the mark: to the scan's end when the stop passed, else past each prompt in done.
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
	return next, !next.Equal(r.stored) || r.distrust != "" // a failing stop records which record it read: one deleted later was there
}

// BlockClose follows the last failure of the gate's block reason: one that holds it names every failed prompt.
const BlockClose = "\nFix each failure above, then finish again."

// FailurePrefix starts each failing check's line in a reason (output lines are indented: only the gate writes it).
const FailurePrefix = "✘ prompt "

// recorded returns why m's claims do not match the client's record of the stops that made them ("": they do).
func recorded(m queue.Mark, res *transcript.Result, event string) string {
	if m.Offset > 0 && m.Offset >= res.From {
		if passed, _ := stopAfter(res.Stops, m.Offset, event); !passed {
			return fmt.Sprintf("the client's record shows no stop the gate passed after its offset %d", m.Offset)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(m.Passed)) {
		off := m.Passed[p]
		if off <= m.Offset || off < res.From {
			continue // claims nothing the Offset does not
		}
		if passed, reason := stopAfter(res.Stops, off, event); !passed && !passedAt(reason, p) {
			return fmt.Sprintf("the client's record shows no stop after offset %d at which prompt %q passed", off, p)
		}
	}
	return ""
}

// stopAfter reads the first stop at or after off: passed, or the gate's block reason; no record is neither.
func stopAfter(stops []transcript.Stop, off int64, event string) (passed bool, blocked string) {
	for _, s := range stops {
		if s.Offset < off || !s.Summary && s.Event != event {
			continue
		}
		for _, e := range s.Errors {
			if strings.HasPrefix(e, "stopgate:") {
				return false, e
			}
		}
		if s.Summary { // and the gate among the hooks the client ran
			return !s.Prevented && slices.ContainsFunc(s.Commands, func(c string) bool { return settings.Program(c) == hook.Gate }), ""
		}
		// Another hook's block: the summary after it tells the gate's part.
	}
	return false, ""
}

// passedAt reports whether a whole block reason of the gate names no failure of prompt p.
func passedAt(reason, p string) bool {
	if !strings.HasPrefix(reason, hook.BlockPrefix) || !strings.Contains(reason, BlockClose) {
		return false
	}
	failures, _, _ := strings.Cut(reason, BlockClose)
	return !slices.ContainsFunc(strings.Split(failures, "\n"), func(line string) bool {
		return strings.HasPrefix(line, FailurePrefix) && strings.Contains(line, strconv.Quote(p))
	})
}

// recordWait bounds the wait for a record behind the stop (docs/fail-closed.md).
const recordWait = 3 * time.Second

// awaitRecord scans every 10 ms until the record is there and current, at most until min(wait, recordWait).
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

// current reports whether res shows the reply the stop follows since the last summary (anywhere once out).
func current(in *hook.Input, res *transcript.Result, out bool) bool {
	want := transcript.TrimReply(in.LastAssistantMessage)
	return in.Client != nil || want == "" || res.Last == want && (res.Replied || out)
}

// Missing applies the missing-config rule (docs/fail-closed.md): the entries queued in the default
// state dir, else what the record shows taken up that can be a prompt ("": nothing, or no stopgate).
func Missing(root string, in *hook.Input, scope queue.Scope, wait time.Time) (pending []queue.Entry, taken string, err error) {
	stateDir := filepath.Join(root, config.DefaultStateDir)
	q := queue.Open(stateDir)
	pending, _, err = q.Snapshot(scope)
	if err != nil || len(pending) > 0 {
		return pending, "", err
	}
	record, path, thread := recordOf(in, scope)
	if path == "" {
		return nil, "", nil
	}
	from, _ := trustedMark(q.Mark(scope), path)
	scan := func() (*transcript.Result, error) { return record.Scan(path, from.Offset, thread, in.Cwd) }
	res, err := scan()
	uses := func() bool {
		return trust.Marked(in.TranscriptPath, root) || usesStopgate(root, stateDir, path, res.From)
	}
	caught := true
	// Waited for only in a project that uses stopgate: others would pay for nothing.
	if err == nil && !current(in, res, false) && uses() {
		res, caught, err = awaitRecord(scan, in, false, wait)
	}
	if os.IsNotExist(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("reading the transcript: %w", err)
	}
	if taken = takenUp(root, res, scope, caught); taken == "" || !uses() { // asked last: a second read
		return nil, "", nil
	}
	return nil, taken, nil
}

// takenUp names the first thing res shows taken up that can be a prompt: an event, bytes unread, a record behind.
func takenUp(root string, res *transcript.Result, scope queue.Scope, caught bool) string {
	for _, ev := range res.Events {
		if taken := promptLike(root, ev, scope); taken != "" {
			return taken
		}
	}
	switch {
	case res.Skipped > 0:
		return fmt.Sprintf("%.1f MiB it could not read", float64(res.Skipped)/(1<<20))
	case !caught:
		return "less than the client wrote (not the reply this stop follows, in time)"
	}
	return ""
}

// promptLike says what ev took up when it can be a prompt, else "".
func promptLike(root string, ev transcript.Event, scope queue.Scope) string {
	if rel, inside := project.Rel(root, ev.Path); ev.Kind == transcript.Read && inside && strings.EqualFold(filepath.Ext(rel), ".md") {
		return "a read of " + rel
	}
	if name := commandOf(ev, scope); name != "" && commandFile(root, name) {
		return "the command /" + name
	}
	return ""
}

// commandFile reports whether /name can run a project's prompt: a plugin's name, or a file under .claude/commands or skills.
func commandFile(root, name string) bool {
	exists := func(p ...string) bool {
		_, err := os.Stat(filepath.Join(p...))
		return err == nil
	}
	return strings.Contains(name, ":") || exists(root, ".claude", "commands", name+".md") || exists(root, ".claude", "skills", name, "SKILL.md")
}

// usesStopgate reports signs of stopgate: its state dir, a hook naming the gate, "stopgate:" in the transcript.
func usesStopgate(root, stateDir, path string, from int64) bool {
	if _, err := os.Stat(stateDir); err == nil {
		return true
	}
	for _, m := range guard.ClientFiles() { // through regular: a planted named pipe would hold the stop; it is a sign
		data, err := regular.ReadFile(filepath.Join(root, filepath.FromSlash(m)), 16<<20)
		if errors.Is(err, regular.ErrNotRegular) || err == nil && bytes.Contains(data, []byte("/gate")) {
			return true
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return true // it was readable a moment ago: err towards judging
	}
	defer f.Close()
	data, err := io.ReadAll(io.NewSectionReader(f, from, transcript.MaxScan))
	return err != nil || bytes.Contains(data, []byte("stopgate:"))
}

// EmptyConfig reports whether the config file holds nothing but blanks: the same as missing, for the rule.
func EmptyConfig(file string) bool {
	data, err := regular.ReadFile(file, 4<<10) // a named pipe is not empty: reading it would hold the stop
	return err == nil && len(bytes.TrimSpace(data)) == 0
}
