// Package queue is stopgate's crash-safe file queue of pending validations, and the state dir's lock and files,
// which every writer there shares. Under the state dir: lock (never deleted), sessions/<session>/<scope>/
// (<key>.json entries, their .baseline, blocks), reconciled/<session>/<scope>.json (Mark) and quarantine/. Every
// change holds the lock (at most Wait(), then a *HeldError) and renames a temp file into place (docs/fail-closed.md).
package queue

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Scope is whose stop an entry gates: a session's main thread (Agent == "") or one subagent.
type Scope struct {
	Session string
	Agent   string
}

func (s Scope) String() string {
	return s.Session + map[bool]string{true: "/main", false: "/agent " + s.Agent}[s.Agent == ""]
}

// Triggers: how a prompt came to be armed.
const (
	TriggerRead    = "read"              // PostToolUse of Read
	TriggerCommand = "slash_command"     // UserPromptExpansion
	TriggerPrompt  = "prompt"            // UserPromptSubmit starting with /command
	TriggerSkill   = "skill"             // PostToolUse of the Skill tool running a command
	TriggerUnread  = "unread transcript" // judged as the transcript since the last pass went unread (never queued)
)

// Entry is one pending validation: Prompt's validators must pass before its scope may stop.
type Entry struct {
	ID        string            `json:"id"` // changes on every write; Remove checks it
	Prompt    string            `json:"prompt"`
	Session   string            `json:"session_id"`
	AgentID   string            `json:"agent_id,omitempty"`
	AgentType string            `json:"agent_type,omitempty"`
	Path      string            `json:"path,omitempty"` // the file whose read armed it
	Trigger   string            `json:"trigger"`
	Line      int               `json:"line,omitempty"`   // of the prompt's [[mapping]] when armed
	Inputs    map[string]string `json:"inputs,omitempty"` // config.Inputs when first armed
	Created   time.Time         `json:"created"`
	Updated   time.Time         `json:"updated"`
	Arms      int               `json:"arms"` // how many times it was armed
}

// Scope returns the entry's scope.
func (e *Entry) Scope() Scope { return Scope{Session: e.Session, Agent: e.AgentID} }

// Queue is a state dir, safe for concurrent use by many processes.
type Queue struct {
	dir  string
	lock string // its lock file
}

// Open returns the queue in dir; nothing is created until something is written.
func Open(dir string) *Queue { return &Queue{dir: dir, lock: filepath.Join(dir, LockName)} }

// Dir returns the state dir.
func (q *Queue) Dir() string { return q.dir }

// EntryPath is where e's file lies: the one thing to remove to disarm it.
func (q *Queue) EntryPath(e Entry) string { return entryFile(q.scopeDir(e.Scope()), e.Prompt) }

func entryFile(dir, prompt string) string { return filepath.Join(dir, Segment(prompt)+".json") }

func (q *Queue) scopeDir(s Scope) string {
	return filepath.Join(q.dir, "sessions", Segment(s.Session), scopeName(s))
}

// scopeName names s within its session's folder (scopeOf reverses it).
func scopeName(s Scope) string {
	return map[bool]string{true: "main", false: "agent-" + Segment(s.Agent)}[s.Agent == ""]
}

func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Enqueue arms e.Prompt for e's scope, reports whether it is new (a re-arm keeps Created and Inputs); record writes its baseline.
func (q *Queue) Enqueue(e Entry, record func(path string) error) (created bool, err error) {
	if e.Session == "" || e.Prompt == "" {
		return false, errors.New("queue entry needs a session and a prompt")
	}
	now, path := time.Now().UTC(), q.EntryPath(e)
	dir, taken := filepath.Dir(path), "" // a new entry's baseline, taken before the lock: held then for a rename, not a walk
	if _, err := os.Lstat(path); record != nil && err != nil && os.MkdirAll(dir, 0o755) == nil {
		taken = take(dir, record)
	}
	defer os.Remove(taken) // unless renamed: the entry existed by the lock
	err = Locked(q.lock, func() error {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		Sweep(dir, Temps, staleTaken())
		var old Entry
		if err := ReadJSON(path, &old); err == nil {
			e.Created, e.Arms = old.Created, old.Arms
			if old.Inputs != nil {
				e.Inputs = old.Inputs // as first armed: a change before a re-arm still shows
			}
		} else {
			e.Created, created = now, true
			// A damaged entry keeps its first baseline: one taken now would forgive every line since.
			if _, berr := os.Lstat(q.BaselinePath(e)); berr != nil || errors.Is(err, fs.ErrNotExist) {
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

// Bad is an unreadable entry file, moved to the quarantine folder and reported instead of failing.
type Bad struct {
	Path  string // where it now lies
	Error error
}

// Snapshot returns s's pending entries by prompt key, and the unreadable ones it set aside.
func (q *Queue) Snapshot(s Scope) (entries []Entry, bad []Bad, err error) {
	dir := q.scopeDir(s)
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil // nothing was ever armed here: no lock needed
	}
	err = Locked(q.lock, func() error {
		entries, bad, err = q.readScope(dir)
		return err
	})
	return entries, bad, err
}

// Remove deletes entries still as read: one re-armed since (a new ID) stays pending.
func (q *Queue) Remove(s Scope, done []Entry) error {
	dir := q.scopeDir(s)
	return Locked(q.lock, func() error {
		for _, e := range done {
			path := entryFile(dir, e.Prompt)
			var cur Entry
			if ReadJSON(path, &cur) != nil || cur.ID != e.ID {
				continue
			}
			if err := remove(path); err != nil {
				return err
			}
			os.Remove(q.BaselinePath(e)) // a leftover is replaced at the next arming
		}
		Sweep(dir, staleTaken())
		prune(dir)
		return nil
	})
}

// Keep writes back entries whose file is gone: a validator that deleted the state dir must not disarm them.
func (q *Queue) Keep(s Scope, entries []Entry) error {
	if len(entries) == 0 {
		return nil
	}
	dir := q.scopeDir(s)
	return Locked(q.lock, func() error {
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

// remove removes path; one already gone is no error.
func remove(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// prune removes a scope dir, and its session dir, once nothing is left.
func prune(dir string) {
	if os.Remove(dir) == nil {
		os.Remove(filepath.Dir(dir))
	}
}

// isEntry reports whether de names an entry file (a temp file does not).
func isEntry(de os.DirEntry) bool {
	return !de.IsDir() && strings.HasSuffix(de.Name(), ".json") && !strings.HasPrefix(de.Name(), TempPrefix)
}

// readScope reads every entry in dir, quarantining the unreadable, under the lock.
func (q *Queue) readScope(dir string) (entries []Entry, bad []Bad, err error) {
	des, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("reading the queue: %w", err)
	}
	Sweep(dir, Temps)
	for _, de := range des {
		if !isEntry(de) {
			continue
		}
		path := filepath.Join(dir, de.Name())
		var e Entry
		err := ReadJSON(path, &e)
		if err == nil && (e.Prompt == "" || e.Session == "" || e.Prompt != Unsegment(strings.TrimSuffix(de.Name(), ".json"))) {
			err = errors.New("entry does not match its file name or lacks prompt or session")
		}
		if err != nil {
			bad = append(bad, q.quarantine(path, err))
			continue
		}
		entries = append(entries, e)
	}
	slices.SortFunc(entries, func(a, b Entry) int { return strings.Compare(a.Prompt, b.Prompt) })
	return entries, bad, nil
}

// quarantine moves an unreadable file aside, keeping it for inspection.
func (q *Queue) quarantine(path string, cause error) Bad {
	qdir := filepath.Join(q.dir, "quarantine")
	rel, _ := filepath.Rel(filepath.Join(q.dir, "sessions"), path)
	dest := filepath.Join(qdir, time.Now().UTC().Format("20060102T150405.000000000")+"-"+strings.ReplaceAll(rel, string(filepath.Separator), "_"))
	err := os.MkdirAll(qdir, 0o755)
	if err == nil {
		err = os.Rename(path, dest)
	}
	if err != nil { // removed rather than fail every stop on it
		os.Remove(path)
		dest = path + " (removed)"
	}
	return Bad{Path: dest, Error: fmt.Errorf("unreadable entry %s: %w", rel, cause)}
}

// HasPending reports whether s has a pending entry, readable or not, without the lock.
func (q *Queue) HasPending(s Scope) bool {
	des, err := os.ReadDir(q.scopeDir(s))
	return err == nil && slices.ContainsFunc(des, isEntry)
}

// BaselinePath is where e's diff baseline lies: beside its entry, not a .json file.
func (q *Queue) BaselinePath(e Entry) string {
	return strings.TrimSuffix(q.EntryPath(e), ".json") + ".baseline"
}

// takenPrefix names a baseline taken before the lock (not TempPrefix, which a lock holder sweeps).
const takenPrefix = ".baseline-"

// take has record write a baseline to a new file in dir; "" when record fails.
func take(dir string, record func(string) error) string {
	tmp := filepath.Join(dir, takenPrefix+newID())
	if err := record(tmp); err != nil {
		os.Remove(tmp)
		return ""
	}
	return tmp
}

// place renames the baseline taken (else takes one now) into place, under the lock.
func (q *Queue) place(e Entry, taken string, record func(string) error) {
	path := q.BaselinePath(e)
	if taken == "" && record != nil {
		taken = take(filepath.Dir(path), record)
	}
	if taken == "" || os.Rename(taken, path) != nil {
		os.Remove(path)
	}
}

// staleTaken are early baselines a killed detect left: older than a live one can be.
func staleTaken() Leftover { return Leftover{Prefix: takenPrefix, Age: Wait() + time.Minute} }
