//go:build !linux

package reuse

import "io/fs"

// statOf is what the cache compares of a file. Elsewhere than Linux the
// change time is not read: the modification time stands for it.
func statOf(fi fs.FileInfo) stat {
	return stat{Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Ctime: fi.ModTime().UnixNano(), Mode: uint32(fi.Mode())}
}
