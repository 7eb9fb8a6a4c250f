package regular

import (
	"io/fs"
	"syscall"
)

// StampOf is fi's stamp.
func StampOf(fi fs.FileInfo) Stamp {
	s := Stamp{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Mode: uint32(fi.Mode())}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.Ctime = st.Ctim.Sec*1e9 + st.Ctim.Nsec
		s.Ino = st.Ino
	}
	return s
}
