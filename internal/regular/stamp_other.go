//go:build !linux

package regular

import "io/fs"

// StampOf is fi's stamp; the mtime stands for the change time.
func StampOf(fi fs.FileInfo) Stamp {
	m := fi.ModTime().UnixNano()
	return Stamp{Size: fi.Size(), Mtime: m, Ctime: m, Mode: uint32(fi.Mode())}
}
