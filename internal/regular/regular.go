// Package regular opens files the agent may have planted, for reading,
// without letting one hold a hook: a regular file or nothing.
package regular

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// ErrNotRegular is Open's answer for a folder, pipe, device or socket.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading, refusing anything but a regular file (an *fs.PathError of ErrNotRegular, with its info).
// Non-blocking: a named pipe would hang the hook till its timeout, a pass; a stat first leaves time to swap one in.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = &fs.PathError{Op: "open", Path: path, Err: ErrNotRegular}
	}
	if err != nil {
		f.Close()
		return nil, info, err
	}
	return f, info, nil
}

// Read reads up to most bytes of path through Open; info is set even when it refuses a folder.
func Read(path string, most int64) (data []byte, info fs.FileInfo, err error) {
	f, info, err := Open(path)
	if err != nil {
		return nil, info, err
	}
	defer f.Close()
	data, err = io.ReadAll(io.LimitReader(f, most))
	return data, info, err
}

// ReadFile is os.ReadFile through Open of at most max bytes (a larger file is refused); a folder in os.ReadFile's words.
func ReadFile(path string, max int64) ([]byte, error) {
	data, info, err := Read(path, max)
	switch {
	case errors.Is(err, ErrNotRegular) && info.IsDir():
		return nil, &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	case err == nil && info.Size() > max:
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d MiB", max>>20)}
	}
	return data, err
}

// Stamp tells that a file changed without reading it; by the kernel's ctime, an mtime restored (touch -r) still shows.
type Stamp struct {
	Size, Mtime, Ctime int64
	Mode               uint32
	Ino                uint64
}

// Changed is the later of the modification and change times.
func (s Stamp) Changed() int64 { return max(s.Mtime, s.Ctime) }

// String is the stamp as one word, for records that compare text.
func (s Stamp) String() string {
	return fmt.Sprintf("%d.%o.%d.%d.%d", s.Size, s.Mode, s.Ino, s.Mtime, s.Ctime)
}
