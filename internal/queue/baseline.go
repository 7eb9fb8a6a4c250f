package queue

import (
	"os"
	"strings"
)

// BaselinePath is where the record of e's diff checks lies: beside its
// entry, in the protected state dir, and not a .json file, so that the
// queue never reads it as an entry.
func (q *Queue) BaselinePath(e Entry) string {
	return strings.TrimSuffix(q.EntryPath(e), ".json") + ".baseline"
}

// record takes a new entry's baseline, replacing any left by an earlier
// arming whose removal was cut short. The caller holds the lock.
func (q *Queue) record(e Entry, record func(string)) {
	path := q.BaselinePath(e)
	os.Remove(path)
	if record != nil {
		record(path)
	}
}
