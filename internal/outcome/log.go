// Package outcome is the gate's log: one JSON line per decision in
// <state_dir>/outcomes.jsonl, each one write under a lock (no interleaving);
// a line torn by a killed writer is skipped and fenced off. It rotates to .1.
package outcome

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/stopgate/stopgate/internal/queue"
)

// FileName is the log's name in the state dir; the rotated log adds ".1".
const FileName = "outcomes.jsonl"

// MaxSize is the size past which the log rotates: tens of thousands of decisions.
var MaxSize int64 = 8 << 20

// Decisions, as logged. Cleared is gate clear's (armed prompts dropped
// unjudged); the Would ones are observe mode's stops that passed instead.
const (
	Pass       = "pass"
	Block      = "block"
	Halt       = "halt"
	Cleared    = "cleared"
	WouldBlock = "would-block"
	WouldHalt  = "would-halt"
)

// Record is one gate decision. Reconciled are the prompts judged although
// their queue entry was missing (the transcript shows them armed).
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
	if r.Agent == "" {
		return "main"
	}
	return "agent " + r.Agent
}

// Check is one validator's result within a decision. Reused: taken as passed
// without running, as it passed at Since and nothing it reads changed (SavedMS
// is that run's time). Skipped: not run, as when_changed selects no change.
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
	// A judge's: its model, tokens and their cost by price_per_mtok;
	// Cached, no request made; Unavailable, no verdict it could verify.
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
	err = queue.NewLock(path + ".lock").Do(func() error {
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

// Read returns the records logged at or after since, oldest first, from the
// rotated log and the current one, and how many lines did not parse.
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
