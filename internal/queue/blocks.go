package queue

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

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
