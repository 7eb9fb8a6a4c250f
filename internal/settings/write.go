package settings

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/atomicfile"
)

// WriteFile replaces the file at path with data atomically, keeping its permissions (a new one 0644) and, for a
// symlink, its link.
func WriteFile(path string, data []byte) error {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	mode := fs.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		mode = st.Mode().Perm()
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, atomicfile.Options{TempPrefix: "." + filepath.Base(path) + ".tmp-", Perm: mode})
}

// ReadIfThere reads path; a missing file is empty (nil).
func ReadIfThere(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return data, err
}
