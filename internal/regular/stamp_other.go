//go:build !linux

package regular

import "io/fs"

// stampOf elsewhere than Linux does not read the change time or the
// inode: the modification time stands for the change time.
func stampOf(fi fs.FileInfo) Stamp {
	m := fi.ModTime().UnixNano()
	return Stamp{Size: fi.Size(), Mtime: m, Ctime: m, Mode: uint32(fi.Mode())}
}
