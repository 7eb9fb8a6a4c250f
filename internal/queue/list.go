package queue

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Pending is one scope's state: what is pending and how many of its stops
// were blocked in a row.
type Pending struct {
	Scope   Scope
	Entries []Entry // ordered by prompt key
	Blocks  int
}

// List returns every scope that has pending entries or a blocked-stop
// count, ordered by session, the main thread before its agents. Like
// Snapshot, it sets unreadable entries aside and reports them.
func (q *Queue) List() (scopes []Pending, bad []Bad, err error) {
	sessions := filepath.Join(q.dir, "sessions")
	if _, err := os.Lstat(sessions); os.IsNotExist(err) {
		return nil, nil, nil // nothing was ever armed: no lock, nothing created
	}
	err = q.lock.Do(func() error {
		sdirs, err := os.ReadDir(sessions)
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		for _, sd := range sdirs {
			if !sd.IsDir() {
				continue
			}
			scopeDirs, _ := os.ReadDir(filepath.Join(sessions, sd.Name()))
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
				if len(entries) == 0 && bc.Count == 0 {
					continue
				}
				scopes = append(scopes, Pending{Scope: s, Entries: entries, Blocks: bc.Count})
			}
		}
		return nil
	})
	sort.Slice(scopes, func(i, j int) bool {
		a, b := scopes[i].Scope, scopes[j].Scope
		if a.Session != b.Session {
			return a.Session < b.Session
		}
		return a.Agent < b.Agent
	})
	return scopes, bad, err
}

// scopeOf reverses scopeName.
func scopeOf(session, scope string) (Scope, bool) {
	s := Scope{Session: Unsegment(session)}
	switch {
	case scope == "main":
		return s, true
	case strings.HasPrefix(scope, "agent-"):
		s.Agent = Unsegment(strings.TrimPrefix(scope, "agent-"))
		return s, true
	}
	return s, false
}

// SetAside returns the paths of the unreadable entries moved to the
// quarantine folder, oldest first (their names start with the time).
func (q *Queue) SetAside() ([]string, error) {
	dir := filepath.Join(q.dir, "quarantine")
	des, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, de := range des {
		if !de.IsDir() {
			out = append(out, filepath.Join(dir, de.Name()))
		}
	}
	return out, nil
}
