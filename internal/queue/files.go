package queue

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// readScope reads every entry in dir, quarantining the unreadable. The
// caller holds the lock.
func (q *Queue) readScope(dir string) (entries []Entry, bad []Bad, err error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("reading the queue: %w", err)
	}
	for _, de := range des {
		name := de.Name()
		if strings.HasPrefix(name, TempPrefix) {
			os.Remove(filepath.Join(dir, name))
			continue
		}
		if !strings.HasSuffix(name, ".json") || de.IsDir() {
			continue
		}
		path := filepath.Join(dir, name)
		var e Entry
		err := ReadJSON(path, &e)
		if err == nil && (e.Prompt == "" || e.Session == "" || e.Prompt != Unsegment(strings.TrimSuffix(name, ".json"))) {
			err = errors.New("entry does not match its file name or lacks prompt or session")
		}
		if err != nil {
			bad = append(bad, q.quarantine(path, err))
			continue
		}
		entries = append(entries, e)
	}
	sort.Slice(entries, func(i, j int) bool { return entries[i].Prompt < entries[j].Prompt })
	return entries, bad, nil
}

// quarantine moves an unreadable file aside, keeping it for inspection.
func (q *Queue) quarantine(path string, cause error) Bad {
	qdir := filepath.Join(q.dir, "quarantine")
	rel, _ := filepath.Rel(filepath.Join(q.dir, "sessions"), path)
	dest := filepath.Join(qdir, time.Now().UTC().Format("20060102T150405.000000000")+"-"+strings.ReplaceAll(rel, string(filepath.Separator), "_"))
	err := os.MkdirAll(qdir, 0o755)
	if err == nil {
		err = os.Rename(path, dest)
	}
	if err != nil {
		// Could not move it: remove it rather than fail every stop on it.
		os.Remove(path)
		dest = path + " (removed)"
	}
	return Bad{Path: dest, Error: fmt.Errorf("unreadable entry %s: %w", rel, cause)}
}

// HasPending reports whether s has any pending entry, readable or not,
// without taking the lock or moving anything: a cheap look for another
// hook that must let the gate's verdict on s come first. Unlike Snapshot it
// never quarantines, so the gate still sees and reports a bad entry.
func (q *Queue) HasPending(s Scope) bool {
	des, err := os.ReadDir(q.scopeDir(s))
	if err != nil {
		return false
	}
	return slices.ContainsFunc(des, func(de os.DirEntry) bool {
		return !de.IsDir() && strings.HasSuffix(de.Name(), ".json") && !strings.HasPrefix(de.Name(), TempPrefix)
	})
}
