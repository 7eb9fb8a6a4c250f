package reuse

import (
	"io/fs"
	"syscall"
)

// statOf is what the cache compares of a file: its size, mode, inode and
// modification and change times.
func statOf(fi fs.FileInfo) stat {
	s := stat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Mode: uint32(fi.Mode())}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Ctime = st.Ctim.Sec*1e9 + st.Ctim.Nsec
		s.Ino = st.Ino
	}
	return s
}
