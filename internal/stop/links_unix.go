//go:build unix

package stop

import (
	"io/fs"
	"os"
	"syscall"
)

// links is a file's count of hard links; 1 when no other name could write it (read-only, another user's).
func links(path string, fi fs.FileInfo) uint64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink <= 1 {
		return 1
	}
	const wOK = 2 // W_OK
	err := syscall.Access(path, wOK)
	if err == syscall.EROFS || err != nil && int(st.Uid) != os.Geteuid() {
		return 1
	}
	return uint64(st.Nlink)
}
