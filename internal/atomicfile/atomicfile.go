// Package atomicfile replaces files so that a reader sees the old content or
// the new, never part of either, even when the writer is killed mid-write.
package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
)

// Options says how Write writes.
type Options struct {
	// TempPrefix begins the temp file's name in path's folder; a sweeper
	// of writers killed mid-write recognises their leftovers by it.
	TempPrefix string
	// Perm, when not zero, is the file's permissions; else the temp
	// file's 0600 stays.
	Perm fs.FileMode
	// NoSync skips the fsyncs: for a cache whose loss costs a recompute,
	// never a wrong answer.
	NoSync bool
}

// Write replaces path with data: a temp file in the same folder, written,
// fsynced, renamed over path, and the folder fsynced so that the rename
// itself survives a crash. On error the temp file is removed and path is
// as it was.
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
