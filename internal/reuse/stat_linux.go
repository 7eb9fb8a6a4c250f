package reuse

import (
	"io/fs"
	"syscall"
)

// statOf is what the cache compares of a file: its size, mode, inode and
// modification and change times.
func statOf(fi fs.FileInfo) stat {
	s := stat{size: fi.Size(), mtime: fi.ModTime().UnixNano(), mode: uint32(fi.Mode())}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ctime = st.Ctim.Sec*1e9 + st.Ctim.Nsec
		s.ino = st.Ino
	}
	return s
}
