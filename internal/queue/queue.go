// Package queue is stopgate's crash-safe file queue of pending validations, and the state dir's lock and files,
// which every writer there shares. Under the state dir: lock (never deleted), sessions/<session>/<scope>/
// (<key>.json entries, their .baseline, blocks), reconciled/<session>/<scope>.json (Mark) and quarantine/. Every
// change holds the lock (at most Wait(), then a *HeldError) and renames a temp file into place (docs/fail-closed.md).
package queue

import (
	"bufio"
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gofrs/flock"

	"github.com/stopgate/stopgate/internal/atomicfile"
	"github.com/stopgate/stopgate/internal/cli"
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
	if os.MkdirAll(qdir, 0o755) != nil || os.Rename(path, dest) != nil { // removed rather than fail every stop on it
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

// Mark is how far the gate reconciled a scope's transcript: every prompt armed before Offset passed, prompt P
// also up to Passed[P]. End and Seal (of the bytes before End) tie it to the transcript (docs/reconciliation.md).
type Mark struct {
	Transcript string           `json:"transcript"`
	Offset     int64            `json:"offset"`
	Passed     map[string]int64 `json:"passed,omitempty"`
	End        int64            `json:"end,omitempty"`
	Seal       string           `json:"seal,omitempty"`
	Updated    time.Time        `json:"updated"`
}

// Equal reports whether m and o mark the same place.
func (m Mark) Equal(o Mark) bool {
	return m.Transcript == o.Transcript && m.Offset == o.Offset && maps.Equal(m.Passed, o.Passed)
}

// Reach is the furthest offset m claims: its Offset or a Passed one.
func (m Mark) Reach() int64 {
	reach := m.Offset
	for _, off := range m.Passed {
		reach = max(reach, off)
	}
	return reach
}

func (q *Queue) markPath(s Scope) string {
	return filepath.Join(q.dir, "reconciled", Segment(s.Session), scopeName(s)+".json")
}

// Mark returns the mark of s; the zero Mark when there is none or it cannot be read.
func (q *Queue) Mark(s Scope) Mark {
	var m Mark
	if ReadJSON(q.markPath(s), &m) != nil {
		m = Mark{}
	}
	return m
}

// SetMark records m for s; a zero Mark removes it.
func (q *Queue) SetMark(s Scope, m Mark) error {
	if m.Transcript == "" {
		return q.store(q.markPath(s), nil)
	}
	m.Updated = time.Now().UTC()
	return q.store(q.markPath(s), &m)
}

// store writes v to path under the lock, crash-safe; nil removes it, and its folders once empty.
func (q *Queue) store(path string, v any) error {
	dir := filepath.Dir(path)
	return Locked(q.lock, func() error {
		if v == nil {
			err := remove(path)
			prune(dir)
			return err
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		Sweep(dir, Temps)
		return WriteJSON(path, v)
	})
}

type blockCount struct {
	Count   int       `json:"count"`
	Updated time.Time `json:"updated"`
	Stop    string    `json:"stop,omitempty"` // the stop that wrote it (hook.Input.StopID)
}

func (q *Queue) blocksPath(s Scope) string { return filepath.Join(q.scopeDir(s), "blocks") }

// Blocks returns how many stops of s in a row were blocked and the stop that counted the last.
func (q *Queue) Blocks(s Scope) (n int, stop string, err error) {
	var b blockCount
	err = ReadJSON(q.blocksPath(s), &b)
	if errors.Is(err, os.ErrNotExist) {
		return 0, "", nil
	}
	if err == nil && b.Count < 0 { // counted up from below zero, a loop would never reach max_blocks
		err = errors.New("the count is below zero, which stopgate never writes")
	}
	if err != nil {
		return 0, "", fmt.Errorf("reading the block count: %w", err)
	}
	return b.Count, b.Stop, nil
}

// SetBlocks records n consecutive blocked stops for s, the last counted by stop; 0 clears it.
func (q *Queue) SetBlocks(s Scope, n int, stop string) error {
	if n == 0 {
		return q.store(q.blocksPath(s), nil)
	}
	return q.store(q.blocksPath(s), &blockCount{Count: n, Updated: time.Now().UTC(), Stop: stop})
}

// Pending is one scope's state: what is pending and how many of its stops were blocked in a row.
type Pending struct {
	Scope   Scope
	Entries []Entry // ordered by prompt key
	Blocks  int
}

// List returns every scope with pending entries or a block count, by session, main first.
func (q *Queue) List() (scopes []Pending, bad []Bad, err error) {
	sessions := filepath.Join(q.dir, "sessions")
	if _, err := os.Lstat(sessions); os.IsNotExist(err) {
		return nil, nil, nil // nothing was ever armed: no lock, nothing created
	}
	err = Locked(q.lock, func() error {
		sdirs, err := os.ReadDir(sessions)
		if err != nil && !os.IsNotExist(err) {
			return err
		}
		for _, sd := range sdirs {
			scopeDirs, _ := os.ReadDir(filepath.Join(sessions, sd.Name())) // nil for a file
			for _, d := range scopeDirs {
				s, ok := scopeOf(sd.Name(), d.Name())
				if !ok || !d.IsDir() {
					continue
				}
				dir := filepath.Join(sessions, sd.Name(), d.Name())
				entries, b, err := q.readScope(dir)
				if err != nil {
					return err
				}
				bad = append(bad, b...)
				var bc blockCount
				ReadJSON(filepath.Join(dir, "blocks"), &bc)
				if len(entries) > 0 || bc.Count != 0 {
					scopes = append(scopes, Pending{Scope: s, Entries: entries, Blocks: bc.Count})
				}
			}
		}
		return nil
	})
	slices.SortFunc(scopes, func(a, b Pending) int {
		return cmp.Or(strings.Compare(a.Scope.Session, b.Scope.Session), strings.Compare(a.Scope.Agent, b.Scope.Agent))
	})
	return scopes, bad, err
}

// scopeOf reverses scopeName.
func scopeOf(session, scope string) (Scope, bool) {
	s := Scope{Session: Unsegment(session)}
	if agent, ok := strings.CutPrefix(scope, "agent-"); ok {
		s.Agent = Unsegment(agent)
		return s, true
	}
	return s, scope == "main"
}

// SetAside returns the paths of the entries set aside in the quarantine folder, oldest first.
func (q *Queue) SetAside() ([]string, error) {
	dir := filepath.Join(q.dir, "quarantine")
	des, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil, nil
	}
	var out []string
	for _, de := range des {
		if !de.IsDir() {
			out = append(out, filepath.Join(dir, de.Name()))
		}
	}
	return out, err
}

// The lock: its file (never deleted: that would let a second writer in), how long to wait for it (long for any honest
// writer, short against hook timeouts) and the variable that sets that, as a Go duration ("500ms", "10s").
const (
	LockName    = "lock"
	DefaultWait = 5 * time.Second
	WaitEnv     = "STOPGATE_LOCK_WAIT"
)

// Wait returns WaitEnv if it is a positive duration, else DefaultWait.
func Wait() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(WaitEnv)); err == nil && d > 0 {
		return d
	}
	return DefaultWait
}

// Locked runs f holding the exclusive lock on the file at path, shared by processes, creating the file if needed;
// past Wait() it returns a *HeldError.
func Locked(path string, f func() error) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	if err := notRegular(path); err != nil {
		return err
	}
	// O_NONBLOCK: a FIFO planted after the check must not hang the open; O_NOFOLLOW: nor may a symlink lead the lock elsewhere.
	fl := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW))
	if err := acquire(fl, Wait()); err != nil {
		return err
	}
	defer fl.Close()
	if info, err := fl.Stat(); err != nil || !info.Mode().IsRegular() {
		return fmt.Errorf("locking %s: %w", path, ErrNotRegular)
	}
	return f()
}

// acquire takes fl within wait in the kernel's blocking flock (a poller loses races); one got too late lets go.
func acquire(fl *flock.Flock, wait time.Duration) error {
	got, gaveUp := make(chan error), make(chan struct{})
	go func() {
		err := fl.Lock()
		select {
		case got <- err:
		case <-gaveUp:
			fl.Close()
		}
	}()
	select {
	case err := <-got:
		if err == nil {
			return nil
		}
		if nr := notRegular(fl.Path()); nr != nil {
			return nr
		}
		return fmt.Errorf("locking %s: %w", fl.Path(), err)
	case <-time.After(wait):
		close(gaveUp)
		return &HeldError{Path: fl.Path(), Waited: wait, Holders: Holders(fl.Path())}
	}
}

// ErrNotRegular is a lock path that is not a plain file (a planted FIFO, symlink...).
var ErrNotRegular = errors.New("the lock is not a regular file")

// notRegular is ErrNotRegular naming what lies at path; nil for a file or nothing.
func notRegular(path string) error {
	if info, err := os.Lstat(path); err == nil && !info.Mode().IsRegular() {
		return fmt.Errorf("locking %s: %w (%s)", path, ErrNotRegular, cmp.Or(kinds[info.Mode().Type()], info.Mode().String()))
	}
	return nil
}

// kinds name the file types, for the error.
var kinds = map[fs.FileMode]string{fs.ModeDir: "a directory", fs.ModeSymlink: "a symlink", fs.ModeNamedPipe: "a named pipe",
	fs.ModeSocket: "a socket", fs.ModeDevice: "a device", fs.ModeDevice | fs.ModeCharDevice: "a device"}

// HeldError is a lock that stayed held past the deadline.
type HeldError struct {
	Path    string
	Waited  time.Duration
	Holders []Holder // who holds it, where the system tells; may be empty
}

func (e *HeldError) Error() string {
	var hs []string
	for _, h := range e.Holders {
		hs = append(hs, h.String())
	}
	return fmt.Sprintf("the lock %s is held by %s and was not free within %v", e.Path, cmp.Or(strings.Join(hs, ", "), "another process"), e.Waited)
}

// Holder is a process holding a lock.
type Holder struct {
	PID     int
	Command string // its command line, when known
}

func (h Holder) String() string {
	return fmt.Sprintf("pid %d", h.PID) + map[bool]string{false: " (" + h.Command + ")"}[h.Command == ""]
}

// TempPrefix starts the name of every file being written in the state dir.
const TempPrefix = ".tmp-"

// WriteJSON writes v to path crash-safe (atomicfile), under the lock; the folder must exist.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(path, append(data, '\n'))
}

// WriteFile is WriteJSON for bytes.
func WriteFile(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Options{TempPrefix: TempPrefix})
}

// ReadJSON reads a file written by WriteJSON; no lock needed.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Leftover names files a killed writer leaves: named Prefix…, older than Age (0: any).
type Leftover struct {
	Prefix string
	Age    time.Duration
}

// Temps are WriteFile's temp files: written under the lock, any a lock holder sees is an orphan.
var Temps = Leftover{Prefix: TempPrefix}

// Sweep removes from dir the leftovers of each kind, in one read of it.
func Sweep(dir string, kinds ...Leftover) {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		for _, k := range kinds {
			if !strings.HasPrefix(de.Name(), k.Prefix) {
				continue
			}
			if info, err := de.Info(); k.Age == 0 || err == nil && time.Since(info.ModTime()) > k.Age {
				os.Remove(filepath.Join(dir, de.Name()))
			}
			break
		}
	}
}

// Segment escapes s into one path segment: no "/", no leading dot (never "..", a temp file, or hidden).
func Segment(s string) string {
	e := url.PathEscape(s)
	if strings.HasPrefix(e, ".") {
		e = "%2E" + e[1:]
	}
	return e
}

// Unsegment reverses Segment.
func Unsegment(s string) string {
	if u, err := url.PathUnescape(s); err == nil {
		return u
	}
	return s
}

// Holders returns the processes holding a lock on path, from Linux's /proc/locks (nil: unknown, as elsewhere); for messages only.
func Holders(path string) []Holder {
	var st syscall.Stat_t
	if syscall.Stat(path, &st) != nil {
		return nil
	}
	f, err := os.Open("/proc/locks")
	if err != nil {
		return nil
	}
	defer f.Close()
	// "1: FLOCK ADVISORY WRITE 1234 08:01:5678 0 EOF": major:minor:inode.
	dev := uint64(st.Dev)
	want := fmt.Sprintf("%02x:%02x:%d", (dev>>8)&0xfff, (dev&0xff)|((dev>>12)&0xfff00), st.Ino)
	var hs []Holder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 6 || fs[1] == "->" || fs[5] != want {
			continue
		}
		pid, err := strconv.Atoi(fs[4])
		if err != nil || pid <= 0 || slices.ContainsFunc(hs, func(h Holder) bool { return h.PID == pid }) {
			continue
		}
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)) // "" when unknown
		hs = append(hs, Holder{PID: pid, Command: cli.Clip(strings.TrimRight(strings.ReplaceAll(string(b), "\x00", " "), " "), 117, "...")})
	}
	return hs
}
