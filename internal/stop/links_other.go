//go:build !unix

package stop

import "io/fs"

// links is 1 where the count of hard links is not known.
func links(string, fs.FileInfo) uint64 { return 1 }
