package queue

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// BaselinePath is where the record of e's diff checks lies: beside its
// entry, in the protected state dir, and not a .json file, so that the
// queue never reads it as an entry.
func (q *Queue) BaselinePath(e Entry) string {
	return strings.TrimSuffix(q.EntryPath(e), ".json") + ".baseline"
}

// takenPrefix begins the name of a baseline taken before the lock, until
// it is renamed into place. Not TempPrefix: a lock holder sweeps
// those as a killed writer's, and this one's writer is alive, waiting for
// the lock.
const takenPrefix = ".baseline-"

// early takes the baseline of an entry that does not exist yet before the
// lock, so that the lock is held for a rename, not a walk of the tree
// that would keep every other hook of the session waiting. It returns its
// file, "" for none: no record, the entry exists (a re-arm keeps its
// baseline), or it failed (the lock holder takes it then).
func (q *Queue) early(path string, record func(string) error) string {
	if record == nil {
		return ""
	}
	if _, err := os.Lstat(path); err == nil {
		return ""
	}
	dir := filepath.Dir(path)
	if os.MkdirAll(dir, 0o755) != nil {
		return ""
	}
	return take(dir, record)
}

// take has record write a baseline to a new file in dir, which only a
// rename makes a baseline: a crash leaves a file nobody reads, swept
// when stale (staleTaken). It returns "" when record fails.
func take(dir string, record func(string) error) string {
	tmp := filepath.Join(dir, takenPrefix+newID())
	if err := record(tmp); err != nil {
		os.Remove(tmp)
		return ""
	}
	return tmp
}

// place puts a new entry's baseline in place, replacing any left by an
// earlier arming whose removal was cut short: the one taken before the
// lock, else one taken now. None at all, the gate cannot judge. The caller
// holds the lock.
func (q *Queue) place(e Entry, taken string, record func(string) error) {
	path := q.BaselinePath(e)
	if taken == "" && record != nil {
		taken = take(filepath.Dir(path), record)
	}
	if taken == "" || os.Rename(taken, path) != nil {
		os.Remove(path)
	}
}

// staleTaken are the baselines taken before the lock that a killed detect
// left: those older than a live one can be, which is renamed or removed
// within the lock's wait of being written.
func staleTaken() Leftover {
	return Leftover{Prefix: takenPrefix, Age: Wait() + time.Minute}
}
