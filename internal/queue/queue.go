// Package queue is stopgate's crash-safe file queue of pending validations.
//
// Layout under the state dir:
//
//	lock                                  permanent flock file, never deleted
//	sessions/<session>/<scope>/<key>.json one pending entry per prompt key
//	sessions/<session>/<scope>/blocks     consecutive blocked stops of the scope
//	quarantine/<time>-<name>              unreadable entries, set aside
//
// <scope> is "main" for the main thread and "agent-<id>" for a subagent.
// Names are escaped so that any session id or key is one path segment.
//
// Every change happens under the exclusive lock, and every file is written
// to a temp file, fsynced and renamed into place, so a reader never sees a
// partial entry even when a writer is killed mid-write. Temp files left by a
// killed writer are swept by the next writer of the same scope, and by
// Snapshot. The lock is held only for file operations, never while
// validators run.
//
// The state dir's lock and file helpers (lock.go, statefiles.go) serve
// every writer there: the test runner's runs and the outcome log too.
// Every lock acquisition has a deadline (Wait): a hook must never run into
// the client's timeout because another process, an agent's `flock … sleep`
// among them, holds the lock. Past the deadline the caller gets a
// *HeldError naming the lock and, where the system tells, who holds it.
package queue

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Scope identifies whose stop an entry gates: a session's main thread
// (Agent == "") or one subagent.
type Scope struct {
	Session string
	Agent   string
}

func (s Scope) String() string {
	if s.Agent == "" {
		return s.Session + "/main"
	}
	return s.Session + "/agent " + s.Agent
}

// Triggers: how a prompt came to be armed.
const (
	TriggerRead    = "read"          // PostToolUse of Read
	TriggerCommand = "slash_command" // UserPromptExpansion
	TriggerPrompt  = "prompt"        // UserPromptSubmit starting with /command
	TriggerSkill   = "skill"         // PostToolUse of the Skill tool running a command
	// TriggerUnread is a prompt judged because the gate could not read
	// all of the transcript since it last passed (never queued).
	TriggerUnread = "unread transcript"
)

// Entry is one pending validation: the validators of Prompt must pass
// before Scope may stop. It records what armed it, never what to run: the
// gate resolves validators from the current mappings.toml.
type Entry struct {
	ID        string `json:"id"` // changes on every write; Remove checks it
	Prompt    string `json:"prompt"`
	Session   string `json:"session_id"`
	AgentID   string `json:"agent_id,omitempty"`
	AgentType string `json:"agent_type,omitempty"`
	Path      string `json:"path,omitempty"` // the file whose read armed it
	Trigger   string `json:"trigger"`
	// Line is the line of mappings.toml where the prompt's [[mapping]]
	// stood when it was armed: if the mapping vanishes, the gate names it.
	Line int `json:"line,omitempty"`
	// Inputs are mappings.toml and the validator programs the prompt's
	// checks depend on, with the SHA-256 of each when first armed
	// (config.Inputs): the gate names those changed since.
	Inputs  map[string]string `json:"inputs,omitempty"`
	Created time.Time         `json:"created"`
	Updated time.Time         `json:"updated"`
	Arms    int               `json:"arms"` // how many times it was armed
}

// Scope returns the entry's scope.
func (e *Entry) Scope() Scope { return Scope{Session: e.Session, Agent: e.AgentID} }

// Queue is a state dir. Its methods are safe for concurrent use by many
// processes.
type Queue struct {
	dir  string
	lock *Lock // held for every change; Do waits at most Wait()
}

// Open returns the queue in dir. Nothing is created until something is
// written: reading a state dir that does not exist finds nothing pending,
// and a hook in a project that arms nothing leaves no trace there.
func Open(dir string) *Queue {
	return &Queue{dir: dir, lock: NewLock(filepath.Join(dir, LockName))}
}

// Dir returns the state dir.
func (q *Queue) Dir() string { return q.dir }

// EntryPath is where e's file lies: the one thing to remove to disarm it
// by hand.
func (q *Queue) EntryPath(e Entry) string { return entryFile(q.scopeDir(e.Scope()), e.Prompt) }

// entryFile names prompt's entry in a scope's folder dir.
func entryFile(dir, prompt string) string {
	return filepath.Join(dir, Segment(prompt)+".json")
}

func (q *Queue) scopeDir(s Scope) string {
	return filepath.Join(q.dir, "sessions", Segment(s.Session), scopeName(s))
}

// scopeName names s within its session's folder (scopeOf reverses it).
func scopeName(s Scope) string {
	if s.Agent == "" {
		return "main"
	}
	return "agent-" + Segment(s.Agent)
}

func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Enqueue arms e.Prompt for e's scope. Arming a prompt that is already
// pending keeps one entry: it keeps Created and counts the arm. It reports
// whether the entry is new. When it is, a non-nil record gives it a
// baseline (baseline.go): record writes one to the new file it is given,
// once per arming, never again on a re-arm. It is taken before the lock
// and renamed into place under it.
func (q *Queue) Enqueue(e Entry, record func(path string) error) (created bool, err error) {
	if e.Session == "" || e.Prompt == "" {
		return false, errors.New("queue entry needs a session and a prompt")
	}
	now := time.Now().UTC()
	path := q.EntryPath(e)
	dir := filepath.Dir(path)
	taken := q.early(path, record)
	defer os.Remove(taken) // unless renamed: the entry existed by the lock
	err = q.lock.Do(func() error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		Sweep(dir, Temps, staleTaken())
		var old Entry
		switch err := ReadJSON(path, &old); {
		case err == nil:
			e.Created, e.Arms = old.Created, old.Arms
			if old.Inputs != nil {
				e.Inputs = old.Inputs // as first armed: a change before a re-arm still shows
			}
		case errors.Is(err, fs.ErrNotExist):
			e.Created, created = now, true
			q.place(e, taken, record)
		default:
			// A damaged entry is written anew, but the baseline of its
			// first arming stays: one taken now would forgive every line
			// added since.
			e.Created, created = now, true
			if _, err := os.Lstat(q.BaselinePath(e)); err != nil {
				q.place(e, taken, record)
			}
		}
		e.ID, e.Updated = newID(), now
		e.Arms++
		return WriteJSON(path, &e)
	})
	if err != nil {
		return false, fmt.Errorf("enqueueing %q for %s: %w", e.Prompt, e.Scope(), err)
	}
	return created, nil
}

// Bad is an entry file that could not be read; Snapshot moves it to the
// quarantine folder and reports it instead of failing.
type Bad struct {
	Path  string // where it now lies
	Error error
}

// Snapshot returns the pending entries of s, ordered by prompt key, and any
// unreadable entries it set aside.
func (q *Queue) Snapshot(s Scope) (entries []Entry, bad []Bad, err error) {
	dir := q.scopeDir(s)
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil // nothing was ever armed here: no lock needed
	}
	err = q.lock.Do(func() error {
		entries, bad, err = q.readScope(dir)
		return err
	})
	return entries, bad, err
}

// Remove deletes entries that are still as they were when read: an entry
// re-armed since (its ID changed) stays pending.
func (q *Queue) Remove(s Scope, done []Entry) error {
	dir := q.scopeDir(s)
	return q.lock.Do(func() error {
		for _, e := range done {
			path := entryFile(dir, e.Prompt)
			var cur Entry
			if ReadJSON(path, &cur) != nil || cur.ID != e.ID {
				continue
			}
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			os.Remove(q.BaselinePath(e)) // a leftover is replaced at the next arming
		}
		Sweep(dir, staleTaken())
		return q.prune(dir)
	})
}

// Keep writes back any of entries whose file is gone, as it was read: a
// validator that deleted or moved the state dir must not disarm the checks
// that failed. An entry still there, or re-armed since, is left as it is.
func (q *Queue) Keep(s Scope, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	dir := q.scopeDir(s)
	return q.lock.Do(func() error {
		for _, e := range entries {
			path := entryFile(dir, e.Prompt)
			if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			if err := WriteJSON(path, &e); err != nil {
				return err
			}
		}
		return nil
	})
}

// prune removes a scope dir, and its session dir, once nothing is left.
func (q *Queue) prune(dir string) error {
	if os.Remove(dir) == nil {
		os.Remove(filepath.Dir(dir))
	}
	return nil
}
