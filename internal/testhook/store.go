package testhook

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/statedir"
)

// Runs live beside the gate's queue, under the same lock and written the
// same crash-safe way:
//
//	<state dir>/runs/<session>/run.json   one session's run: plan, results, vars
//
// A session has at most one run; starting another replaces it.

// runFile returns where session's run is kept, without touching the disk.
func runFile(stateDir, session string) string {
	return filepath.Join(stateDir, "runs", statedir.Segment(session), "run.json")
}

// Store is the runs of one state dir; the first write creates it.
type Store struct{ dir string }

// loadRun returns the run in path, or nil when there is none. It needs no
// lock: the file is replaced whole.
func loadRun(path string) (*State, error) {
	var st State
	if err := statedir.ReadJSON(path, &st); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, unreadable(path, err)
	}
	if err := st.check(); err != nil {
		return nil, unreadable(path, err)
	}
	return &st, nil
}

// unreadable is a run file that cannot be used: a new run replaces it.
func unreadable(path string, err error) error {
	return cli.WithHint(fmt.Errorf("run %s is unreadable: %w", path, err), "start a new run with testhook init, or /run-tests in Claude Code")
}

// Update changes session's run under the lock: f gets the run (nil when
// there is none) and returns the run to write, or nil to write nothing.
// It returns the run as it now is. An unreadable run is an error: only
// Replace overwrites it.
func (s *Store) Update(session string, f func(*State) (*State, error)) (*State, error) {
	var out *State
	err := s.locked(session, func(path string) error {
		old, err := loadRun(path)
		if err != nil {
			return err
		}
		st, err := f(old)
		if err != nil {
			return err
		}
		if out = st; st == nil {
			out = old
			return nil
		}
		return statedir.WriteJSON(path, st)
	})
	return out, err
}

// Replace makes st session's run, and returns the run it replaced, if that
// was readable.
func (s *Store) Replace(session string, st *State) (old *State, err error) {
	err = s.locked(session, func(path string) error {
		old, _ = loadRun(path)
		return statedir.WriteJSON(path, st)
	})
	return old, err
}

func (s *Store) locked(session string, f func(path string) error) error {
	path := runFile(s.dir, session)
	return statedir.NewLock(filepath.Join(s.dir, statedir.LockName)).Do(func() error {
		dir := filepath.Dir(path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		statedir.Sweep(dir, statedir.Temps)
		return f(path)
	})
}

// sessions returns the sessions that have a run in stateDir, sorted.
func sessions(stateDir string) ([]string, error) {
	des, err := os.ReadDir(filepath.Join(stateDir, "runs"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var out []string
	for _, de := range des {
		if _, err := os.Stat(filepath.Join(stateDir, "runs", de.Name(), "run.json")); err == nil {
			out = append(out, statedir.Unsegment(de.Name()))
		}
	}
	sort.Strings(out)
	return out, nil
}
