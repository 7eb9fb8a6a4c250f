// Package outcome is the gate's log: one JSON line per decision in <state_dir>/outcomes.jsonl, each one write under
// a lock (no interleaving); a line torn by a killed writer is skipped and fenced off. It rotates to .1.
package outcome

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/stopgate/stopgate/internal/queue"
)

// FileName is the log's name in the state dir; the rotated log adds ".1".
const FileName = "outcomes.jsonl"

// MaxSize is the size past which the log rotates: tens of thousands of decisions.
var MaxSize int64 = 8 << 20

// Decisions, as logged. Cleared is gate clear's (armed prompts dropped unjudged); the Would ones are observe mode's stops that passed instead.
const (
	Pass       = "pass"
	Block      = "block"
	Halt       = "halt"
	Cleared    = "cleared"
	WouldBlock = "would-block"
	WouldHalt  = "would-halt"
)

// Record is one gate decision. Reconciled are the prompts judged although their queue entry was missing (the transcript shows them armed).
type Record struct {
	Time       time.Time     `json:"time"`
	Event      string        `json:"event"` // Stop or SubagentStop
	Session    string        `json:"session_id"`
	Agent      string        `json:"agent_id,omitempty"`
	Prompts    []string      `json:"prompts"`           // the pending prompts judged
	Checks     []Check       `json:"validators"`        // in mappings.toml order
	Decision   string        `json:"decision"`          // pass, block or halt
	Blocks     int           `json:"blocks"`            // consecutive blocked stops after this one
	Observe    bool          `json:"observe,omitempty"` // judged in observe mode
	Reconciled []Discrepancy `json:"reconciled,omitempty"`
	Client     string        `json:"client,omitempty"`    // gate init --client's name
	Cause      string        `json:"cause,omitempty"`     // the kind of a block's or halt's reason
	Reason     string        `json:"reason,omitempty"`    // a halt's
	Telemetry  string        `json:"telemetry,omitempty"` // an export that failed (the verdict stood)
}

// Discrepancy is one prompt the transcript armed that the queue lacked.
type Discrepancy struct {
	Prompt     string `json:"prompt"`
	Trigger    string `json:"trigger"`        // read, slash_command or prompt
	Path       string `json:"path,omitempty"` // the file read
	Transcript string `json:"transcript"`
	Offset     int64  `json:"offset"`         // of the transcript line
	UUID       string `json:"uuid,omitempty"` // the transcript line's
}

// Scope is "main" for the main thread, else "agent ID".
func (r *Record) Scope() string {
	return map[bool]string{true: "main", false: "agent " + r.Agent}[r.Agent == ""]
}

// Check is one validator's result within a decision. Reused: taken as passed without running, as it passed at Since
// and nothing it reads changed (SavedMS is that run's time). Skipped: not run, as when_changed selects no change.
type Check struct {
	Name       string     `json:"name"`
	Prompts    []string   `json:"prompts"`
	Passed     bool       `json:"passed"`
	Result     string     `json:"result"` // "passed", "exit status 1", "timed out after 10s", …
	DurationMS float64    `json:"duration_ms"`
	Kind       string     `json:"kind,omitempty"`      // run, file, diff or judge
	ExitCode   *int       `json:"exit_code,omitempty"` // a run's; -1 when killed or not started
	Expect     string     `json:"expect,omitempty"`    // what a file or diff check asks
	TimedOut   bool       `json:"timed_out,omitempty"`
	Confined   bool       `json:"confined,omitempty"`
	Reused     bool       `json:"reused,omitempty"`
	Since      *time.Time `json:"unchanged_since,omitempty"`
	SavedMS    float64    `json:"saved_ms,omitempty"`
	Skipped    bool       `json:"skipped,omitempty"`
	// A judge's: its model, tokens and their cost by price_per_mtok; Cached, no request made; Unavailable, no verdict it could verify.
	Model        string  `json:"model,omitempty"`
	InputTokens  int     `json:"input_tokens,omitempty"`
	OutputTokens int     `json:"output_tokens,omitempty"`
	CostUSD      float64 `json:"cost_usd,omitempty"`
	Cached       bool    `json:"cached,omitempty"`
	Unavailable  bool    `json:"unavailable,omitempty"`
}

// Duration returns the check's run time.
func (c *Check) Duration() time.Duration {
	return time.Duration(c.DurationMS * float64(time.Millisecond))
}

// Millis converts d for Check.DurationMS, to the microsecond.
func Millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Append adds r to the log in dir.
func Append(dir string, r Record) error {
	line, err := json.Marshal(r)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	path := filepath.Join(dir, FileName)
	// A lock file of its own: the log is renamed away on rotation.
	err = queue.Locked(path+".lock", func() error {
		// Read-write: the last byte is checked on the same file.
		f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		return appendLine(f, path, line)
	})
	if err != nil {
		return fmt.Errorf("outcome log: %w", err)
	}
	return nil
}

// appendLine writes line at the end of f, rotating it past MaxSize.
func appendLine(f *os.File, path string, line []byte) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	if size >= MaxSize {
		// Under the lock: writers waiting on it see that it moved and reopen.
		if err := os.Rename(path, path+".1"); err != nil {
			return err
		}
		nf, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return err
		}
		defer nf.Close()
		f, size = nf, 0
	}
	last := []byte{'\n'}
	if size > 0 {
		f.ReadAt(last, size-1) // unread: taken as a whole line
	}
	if last[0] != '\n' {
		line = append([]byte{'\n'}, line...) // fence off a line torn by a killed writer
	}
	_, err = f.Write(line)
	return err
}

// Read returns the records logged at or after since, oldest first, from the rotated log and the current one, and how many lines did not parse.
func Read(dir string, since time.Time) (records []Record, skipped int, err error) {
	path := filepath.Join(dir, FileName)
	for _, p := range []string{path + ".1", path} {
		f, err := os.Open(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			line := bytes.TrimSpace(sc.Bytes())
			if len(line) == 0 {
				continue
			}
			var rec Record
			if err := json.Unmarshal(line, &rec); err != nil || rec.Time.IsZero() {
				skipped++
				continue
			}
			if !rec.Time.Before(since) {
				records = append(records, rec)
			}
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return nil, 0, fmt.Errorf("reading %s: %w", p, err)
		}
	}
	return records, skipped, nil
}

// Stats summarises a log: pass rates, blocks per session, attempts until a prompt passes, slow validators. Its JSON is `gate stats --json`'s.
type Stats struct {
	Decisions  int              `json:"decisions"`
	Passes     int              `json:"passes"`
	Blocks     int              `json:"blocks"`
	Halts      int              `json:"halts"`
	WouldBlock int              `json:"would_block"` // observe mode's stops
	WouldHalt  int              `json:"would_halt"`
	Cleared    int              `json:"-"` // gate clear's records: no stop judged
	From       time.Time        `json:"from,omitzero"`
	To         time.Time        `json:"to,omitzero"`
	Prompts    []PromptStats    `json:"prompts"`    // by prompt key
	Validators []ValidatorStats `json:"validators"` // by name
	Sessions   []SessionStats   `json:"sessions"`   // most blocks first
	// Reused counts the checks taken as passed without running; Saved adds up the runs they did not repeat.
	Reused  int             `json:"reused"`
	Saved   time.Duration   `json:"-"`
	SavedMS float64         `json:"saved_ms"`
	Spend   `json:"judges"` // the judges'
}

// Spend is what judges cost: requests made, answers cached, tokens, dollars.
type Spend struct {
	Asked        int     `json:"requests"`
	Cached       int     `json:"cached"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
}

// add counts a judge's check.
func (s *Spend) add(c Check) {
	if c.Cached {
		s.Cached++
	} else {
		s.Asked++
	}
	s.InputTokens += c.InputTokens
	s.OutputTokens += c.OutputTokens
	s.CostUSD += c.CostUSD
}

// PromptStats is one prompt's record: it passes a decision when all its validators did. Attempts count, per session
// scope, its checks up to its pass; Unresolved, scopes whose last check failed; Observed/WouldBlock, observe-mode stops/failures.
type PromptStats struct {
	Prompt        string  `json:"prompt"`
	Checked       int     `json:"checked"`
	Passed        int     `json:"passed"`
	Resolved      int     `json:"resolved"`
	Unresolved    int     `json:"still_failing"`
	AttemptsAvg   float64 `json:"attempts_avg"` // the mean number of checks until it passed
	AttemptsMax   int     `json:"attempts_max"`
	Observed      int     `json:"observed"`
	WouldBlock    int     `json:"would_block"`
	AttemptsTotal int     `json:"-"`
}

// ValidatorStats is one validator's record; the _ms fields are for JSON.
type ValidatorStats struct {
	Name       string                  `json:"name"`
	Runs       int                     `json:"runs"`
	Passed     int                     `json:"passed"`
	MedianMS   float64                 `json:"median_ms"`
	MaxMS      float64                 `json:"max_ms"`
	Observed   int                     `json:"observed"`    // as PromptStats', of its runs
	WouldBlock int                     `json:"would_block"` // as PromptStats', of its runs
	Reused     int                     `json:"reused"`      // as Stats', for the validator
	SavedMS    float64                 `json:"saved_ms"`
	Spend      `json:"judge,omitzero"` // a judge's
	Durations  []time.Duration         `json:"-"` // sorted, of the runs
	Saved      time.Duration           `json:"-"`
	// Of the runs: the median, the longest, and their sum.
	Median, Max, Total time.Duration `json:"-"`
}

// SessionStats is one session's record, its agents included.
type SessionStats struct {
	Session   string `json:"session_id"`
	Decisions int    `json:"decisions"`
	Blocks    int    `json:"blocks"`
	Halts     int    `json:"halts"`
}

// Summarize computes the Stats of records, oldest first.
func Summarize(records []Record) Stats {
	t := tally{prompts: map[string]*PromptStats{}, validators: map[string]*ValidatorStats{}, sessions: map[string]*SessionStats{}, attempts: map[[3]string]int{}}
	for _, r := range records {
		t.decision(r)
		t.checks(r)
		t.promptsOf(r)
	}
	return t.stats()
}

// tally is Summarize's running count.
type tally struct {
	st         Stats
	prompts    map[string]*PromptStats
	validators map[string]*ValidatorStats
	sessions   map[string]*SessionStats
	attempts   map[[3]string]int // (session, scope, prompt) → checks since the last pass
}

// decision counts r's decision, overall and for its session.
func (t *tally) decision(r Record) {
	st := &t.st
	st.Decisions++
	if st.From.IsZero() || r.Time.Before(st.From) {
		st.From = r.Time
	}
	if r.Time.After(st.To) {
		st.To = r.Time
	}
	s := entry(t.sessions, r.Session, func() *SessionStats { return &SessionStats{Session: r.Session} })
	s.Decisions++
	for _, n := range map[string][]*int{Pass: {&st.Passes}, Block: {&st.Blocks, &s.Blocks}, Halt: {&st.Halts, &s.Halts},
		WouldBlock: {&st.WouldBlock}, WouldHalt: {&st.WouldHalt}, Cleared: {&st.Cleared}}[r.Decision] {
		*n++
	}
}

// checks counts each validator run of r.
func (t *tally) checks(r Record) {
	for _, c := range r.Checks {
		if c.Skipped {
			continue // not a run, nor a pass or a failure
		}
		v := entry(t.validators, c.Name, func() *ValidatorStats { return &ValidatorStats{Name: c.Name} })
		if c.Reused {
			saved := time.Duration(c.SavedMS * float64(time.Millisecond))
			v.Reused++
			v.Saved += saved
			t.st.Reused++
			t.st.Saved += saved
			continue // not a run: no duration, no pass counted twice
		}
		if c.Kind == "judge" {
			v.Spend.add(c)
			t.st.Spend.add(c)
		}
		v.Runs++
		if c.Passed {
			v.Passed++
		}
		if r.observed() {
			v.Observed++
			if !c.Passed {
				v.WouldBlock++
			}
		}
		v.Durations = append(v.Durations, c.Duration())
		v.Total += c.Duration()
	}
}

// entry returns m[key], made by init and stored first when missing.
func entry[V any](m map[string]*V, key string, init func() *V) *V {
	v, ok := m[key]
	if !ok {
		v = init()
		m[key] = v
	}
	return v
}

// observed reports whether r is an observe-mode stop (settings.mode).
func (r Record) observed() bool { return r.WouldStop() || r.Observe }

// WouldStop reports whether r is a stop observe mode let through, that it would have blocked or halted.
func (r Record) WouldStop() bool { return r.Decision == WouldBlock || r.Decision == WouldHalt }

// promptsOf counts each prompt r checked, and the attempts it took to pass.
func (t *tally) promptsOf(r Record) {
	for _, p := range r.Prompts {
		checked, passed := r.PromptResult(p)
		if !checked {
			continue
		}
		ps := entry(t.prompts, p, func() *PromptStats { return &PromptStats{Prompt: p} })
		ps.Checked++
		if r.observed() {
			ps.Observed++
			if !passed {
				ps.WouldBlock++
			}
		}
		key := [3]string{r.Session, r.Agent, p}
		t.attempts[key]++
		if passed {
			ps.Passed++
			ps.Resolved++
			ps.AttemptsTotal += t.attempts[key]
			ps.AttemptsMax = max(ps.AttemptsMax, t.attempts[key])
			delete(t.attempts, key)
		}
	}
}

// stats returns the tally in Stats' orders.
func (t *tally) stats() Stats {
	st := t.st
	st.SavedMS = Millis(st.Saved)
	for key := range t.attempts {
		t.prompts[key[2]].Unresolved++
	}
	for _, v := range t.validators {
		slices.Sort(v.Durations)
		if n := len(v.Durations); n > 0 {
			v.Median, v.Max = v.Durations[n/2], v.Durations[n-1]
		}
		v.MedianMS, v.MaxMS, v.SavedMS = Millis(v.Median), Millis(v.Max), Millis(v.Saved)
	}
	for _, p := range t.prompts {
		if p.Resolved > 0 {
			p.AttemptsAvg = float64(p.AttemptsTotal) / float64(p.Resolved)
		}
	}
	st.Prompts = values(t.prompts, func(a, b PromptStats) int { return cmp.Compare(a.Prompt, b.Prompt) })
	st.Validators = values(t.validators, func(a, b ValidatorStats) int { return cmp.Compare(a.Name, b.Name) })
	st.Sessions = values(t.sessions, func(a, b SessionStats) int {
		return cmp.Or(cmp.Compare(b.Blocks+b.Halts, a.Blocks+a.Halts), cmp.Compare(a.Session, b.Session))
	})
	return st
}

// values returns m's values in order, never nil (JSON's []).
func values[V any](m map[string]*V, order func(a, b V) int) []V {
	out := []V{}
	for _, v := range m {
		out = append(out, *v)
	}
	slices.SortFunc(out, order)
	return out
}

// Slowest returns the validators ordered by their longest run, slowest first.
func (st Stats) Slowest() []ValidatorStats {
	out := slices.Clone(st.Validators)
	slices.SortStableFunc(out, func(a, b ValidatorStats) int { return cmp.Compare(b.Max, a.Max) })
	return out
}

// PromptResult reports whether any validator of prompt p ran in r, and whether all of those passed: the prompt passed the stop.
func (r Record) PromptResult(p string) (checked, passed bool) {
	passed = true
	for _, c := range r.Checks {
		if slices.Contains(c.Prompts, p) && !c.Skipped {
			checked, passed = true, passed && c.Passed
		}
	}
	return checked, checked && passed
}
