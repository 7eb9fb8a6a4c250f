package detect

import (
	"errors"
	"os"

	"github.com/stopgate/stopgate/internal/baseline"
	"github.com/stopgate/stopgate/internal/config"
)

// recorder returns what takes the baseline of m's diff checks, and of
// the whole tree (the files changed since, for every validator), when its
// entry is created. A record that cannot be written leaves none, and the
// gate then says it could not judge, and takes the changed files as
// unknown: the entry is armed all the same.
func recorder(root string, cfg *config.Config, m *config.Mapping, validator func(string) (*config.Validator, error)) (func(string) error, error) {
	want, err := config.WantOf(m, validator)
	if err != nil {
		return nil, err
	}
	want.Tree = true
	skip := []string{cfg.StateDir()}
	return func(path string) error {
		return baseline.Take(root, want, skip).Write(path, writeRecord)
	}, nil
}

// writeRecord writes a record to the new file the queue renames into
// place, without fsync: a crash can leave it absent or cut short, which
// the gate reads as no record and cannot judge, never as a pass; the
// fsync would cost detect more than the record itself.
func writeRecord(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// memo remembers the validators looked up: the inputs and the baseline of
// one arming read the same records.
func memo(lookup func(string) (*config.Validator, error)) func(string) (*config.Validator, error) {
	seen := map[string]*config.Validator{}
	return func(name string) (*config.Validator, error) {
		if v, ok := seen[name]; ok {
			return v, nil
		}
		v, err := lookup(name)
		if err == nil {
			seen[name] = v
		}
		return v, err
	}
}
