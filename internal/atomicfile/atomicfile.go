// Package atomicfile replaces files so that a reader sees the old content or the new, even when the writer is killed mid-write.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Options says how Write writes.
type Options struct {
	TempPrefix string      // the temp file's, by which a sweeper knows leftovers
	Perm       fs.FileMode // 0: the temp file's 0600
	NoSync     bool        // no fsync: a cache whose loss costs a recompute
}

// Write replaces path with data by a temp file renamed over it, file and folder fsynced. On error path is as it was.
func Write(path string, data []byte, o Options) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, o.TempPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil && o.Perm != 0 {
		err = f.Chmod(o.Perm)
	}
	if err == nil && !o.NoSync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	if !o.NoSync {
		if d, err := os.Open(dir); err == nil {
			d.Sync()
			d.Close()
		}
	}
	return nil
}
