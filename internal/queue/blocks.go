package queue

import (
	"errors"
	"os"
	"path/filepath"
	"time"
)

type blockCount struct {
	Count   int       `json:"count"`
	Updated time.Time `json:"updated"`
}

func (q *Queue) blocksPath(s Scope) string { return filepath.Join(q.scopeDir(s), "blocks") }

// Blocks returns how many consecutive stops of s were blocked.
func (q *Queue) Blocks(s Scope) int {
	var b blockCount
	readJSON(q.blocksPath(s), &b)
	return b.Count
}

// SetBlocks records n consecutive blocked stops for s; 0 clears the count.
func (q *Queue) SetBlocks(s Scope, n int) error {
	path := q.blocksPath(s)
	return q.locked(func() error {
		if n == 0 {
			if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			return q.prune(filepath.Dir(path))
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		return writeJSON(path, &blockCount{Count: n, Updated: time.Now().UTC()})
	})
}
