package queue

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

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
