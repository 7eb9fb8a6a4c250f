//go:build unix

package stop

import (
	"io/fs"
	"os"
	"syscall"
)

// links is a file's count of hard links when another name could write it:
// 1 on a read-only file system or for another user's file this one cannot
// write (a package store that deduplicates with hard links).
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
