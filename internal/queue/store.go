package queue

import (
	"os"
	"strings"
)

// HasPending reports whether s has any pending entry, readable or not,
// without taking the lock or moving anything: a cheap look for another
// hook that must let the gate's verdict on s come first. Unlike Snapshot it
// never quarantines, so the gate still sees and reports a bad entry.
func (q *Queue) HasPending(s Scope) bool {
	des, err := os.ReadDir(q.scopeDir(s))
	if err != nil {
		return false
	}
	for _, de := range des {
		name := de.Name()
		if !de.IsDir() && strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, TempPrefix) {
			return true
		}
	}
	return false
}
