package detect

import (
	"errors"
	"os"

	"github.com/stopgate/stopgate/internal/baseline"
	"github.com/stopgate/stopgate/internal/config"
)

// recorder returns what takes the baseline of m's diff checks and of the
// whole tree when its entry is created. Without a record the gate says it
// cannot judge the diff: the entry is armed all the same.
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

// writeRecord writes a record without fsync, which would cost detect more
// than the record: one a crash cuts short is no record to the gate, never a pass.
func writeRecord(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return errors.Join(err, f.Close())
}

// memo remembers the validators looked up by one arming.
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
