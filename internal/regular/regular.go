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

// ErrNotRegular is Open's answer for a folder, a named pipe, a device or
// a socket.
var ErrNotRegular = errors.New("not a regular file")

// Open opens path for reading and refuses anything but a regular file
// (links followed). The open is non-blocking: opening a named pipe with no
// writer would wait for one for ever, and a stat before the open leaves
// the agent time to swap one in; a hook the client kills at its timeout
// lets the agent through. Reading a regular file ignores the flag.
//
// A file that is not regular gives its info and an *fs.PathError wrapping
// ErrNotRegular; callers word that, and bound what they read, themselves.
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

// ReadFile is os.ReadFile through Open, of a file of at most max bytes: a
// larger one is refused, and the read stops at max (a file that grows).
// A folder is refused in os.ReadFile's words, "is a directory".
func ReadFile(path string, max int64) ([]byte, error) {
	f, info, err := Open(path)
	switch {
	case errors.Is(err, ErrNotRegular) && info.IsDir():
		return nil, &fs.PathError{Op: "read", Path: path, Err: syscall.EISDIR}
	case err != nil:
		return nil, err
	}
	defer f.Close()
	if info.Size() > max {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("larger than %d MiB", max>>20)}
	}
	return io.ReadAll(io.LimitReader(f, max))
}
