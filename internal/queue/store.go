package queue

import (
	"os"
	"strings"
)

// The queue's lock and crash-safe writes, for other state kept in the same
// state dir (the test runner's runs): one lock file and one way of writing
// guard everything under the state dir, so no second implementation can
// drift from the first.

// Locked runs f while holding the state dir's exclusive lock, the same lock
// every queue change takes. f must not call other locking Queue methods.
func (q *Queue) Locked(f func() error) error { return q.locked(f) }

// WriteJSON writes v to path as indented JSON, crash-safe: a temp file in
// the same folder, fsynced and renamed into place, so a reader sees the old
// content or the new, never a part. The folder must exist. Call it under
// Locked, so that two writers cannot interleave a read-modify-write.
func WriteJSON(path string, v any) error { return writeJSON(path, v) }

// WriteFile is WriteJSON for bytes.
func WriteFile(path string, data []byte) error { return writeFile(path, data) }

// ReadJSON reads a file written by WriteJSON. Readers need no lock: a
// rename is atomic.
func ReadJSON(path string, v any) error { return readJSON(path, v) }

// SweepTemps removes temp files a killed writer left in dir. Call it under
// Locked: writers write only under the lock, so any temp file seen then is
// an orphan.
func SweepTemps(dir string) { sweepTemps(dir) }

// Segment escapes s into one safe path segment (no "/", no leading dot), as
// the queue names its session folders; Unsegment reverses it.
func Segment(s string) string { return segment(s) }

// Unsegment reverses Segment.
func Unsegment(s string) string { return unsegment(s) }

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
		if !de.IsDir() && strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, tempPrefix) {
			return true
		}
	}
	return false
}
