package queue

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"time"
)

// Mark is how far the gate has reconciled a scope's transcript with the
// queue (see package reconcile): every mapped prompt read or invoked
// before Offset was judged at a passing stop, and prompt P also up to
// Passed[P], where it passed at a stop that blocked on others. A prompt
// found later in the transcript whose entry is missing is judged anyway.
//
// It lives outside sessions/, in reconciled/<session>/<scope>.json, so the
// queue's own folders hold pending work only.
//
// The agent can write the file, so the gate checks a mark against the
// transcript before it trusts it: End is how far the transcript had been
// read when the mark was written, Seal the transcript.Seal of the bytes
// before End. Offset and every Passed lie at or before End. The seal is no
// secret, so the gate also checks each offset against the client's record
// of the stop that wrote it (reconcile/record.go).
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

// Mark returns the mark of s; the zero Mark when there is none or it
// cannot be read, which only costs a longer reconciliation.
func (q *Queue) Mark(s Scope) Mark {
	var m Mark
	if ReadJSON(q.markPath(s), &m) != nil {
		return Mark{}
	}
	return m
}

// SetMark records m for s, under the lock and crash-safe; a zero Mark
// removes it.
func (q *Queue) SetMark(s Scope, m Mark) error {
	path := q.markPath(s)
	return q.lock.Do(func() error {
		dir := filepath.Dir(path)
		if m.Transcript == "" {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			os.Remove(dir) // the session's last mark
			return nil
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		Sweep(dir, Temps)
		m.Updated = time.Now().UTC()
		return WriteJSON(path, &m)
	})
}

// ErrForgedCount is a block count no gate wrote: below zero.
var ErrForgedCount = errors.New("the count is below zero, which stopgate never writes")

type blockCount struct {
	Count   int       `json:"count"`
	Updated time.Time `json:"updated"`
	Stop    string    `json:"stop,omitempty"` // the stop that wrote it (hook.Input.StopID)
}

func (q *Queue) blocksPath(s Scope) string { return filepath.Join(q.scopeDir(s), "blocks") }

// Blocks returns how many consecutive stops of s were blocked, and the id
// of the stop that counted the last ("": none given): 0 when no count is
// kept, an error when one is kept but cannot be read (the gate then
// cannot bound a loop of blocks, and halts).
func (q *Queue) Blocks(s Scope) (n int, stop string, err error) {
	var b blockCount
	err = ReadJSON(q.blocksPath(s), &b)
	if errors.Is(err, os.ErrNotExist) {
		return 0, "", nil
	}
	if err != nil {
		return 0, "", fmt.Errorf("reading the block count: %w", err)
	}
	if b.Count < 0 {
		// Only a hand could write it: a loop counted up from below zero
		// would never reach max_blocks, and the client's own cap would let
		// the agent stop unchecked.
		return 0, "", fmt.Errorf("reading the block count: %w", ErrForgedCount)
	}
	return b.Count, b.Stop, nil
}

// SetBlocks records n consecutive blocked stops for s, the last counted by
// the stop of id stop; 0 clears the count.
func (q *Queue) SetBlocks(s Scope, n int, stop string) error {
	path := q.blocksPath(s)
	return q.lock.Do(func() error {
		if n == 0 {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			return q.prune(filepath.Dir(path))
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return WriteJSON(path, &blockCount{Count: n, Updated: time.Now().UTC(), Stop: stop})
	})
}
