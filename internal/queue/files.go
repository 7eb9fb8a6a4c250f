package queue

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/atomicfile"
)

const tempPrefix = ".tmp-"

// segment escapes s into one safe path segment: no "/", and no leading dot
// so it can never be "..", a temp file, or hidden.
func segment(s string) string {
	e := url.PathEscape(s)
	if strings.HasPrefix(e, ".") {
		e = "%2E" + e[1:]
	}
	return e
}

// unsegment reverses segment.
func unsegment(s string) string {
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}

// writeJSON writes v to path atomically: temp file, fsync, rename, and an
// fsync of the directory so the rename itself survives a crash.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(path, append(data, '\n'))
}

func writeFile(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Options{TempPrefix: tempPrefix})
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// sweepTemps removes temp files in dir. Callers hold the lock, and writers
// write only under it, so any temp file seen then was left by a killed
// writer.
func sweepTemps(dir string) {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		if strings.HasPrefix(de.Name(), tempPrefix) {
			os.Remove(filepath.Join(dir, de.Name()))
		}
	}
}

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
		if strings.HasPrefix(name, tempPrefix) {
			os.Remove(filepath.Join(dir, name))
			continue
		}
		if !strings.HasSuffix(name, ".json") || de.IsDir() {
			continue
		}
		path := filepath.Join(dir, name)
		var e Entry
		err := readJSON(path, &e)
		if err == nil && (e.Prompt == "" || e.Session == "" || e.Prompt != unsegment(strings.TrimSuffix(name, ".json"))) {
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
