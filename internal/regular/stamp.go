package regular

import (
	"fmt"
	"io/fs"
)

// Stamp is what tells that a file changed without reading it: its size,
// mode, inode, and modification and change times. The change time is the
// kernel's: the file's owner cannot set it back, so an edit whose
// modification time was restored (touch -r) still shows.
type Stamp struct {
	Size, Mtime, Ctime int64
	Mode               uint32
	Ino                uint64
}

// Changed is the later of the modification and change times, in
// nanoseconds.
func (s Stamp) Changed() int64 { return max(s.Mtime, s.Ctime) }

// String is the stamp as one word, for records that compare text.
func (s Stamp) String() string {
	return fmt.Sprintf("%d.%o.%d.%d.%d", s.Size, s.Mode, s.Ino, s.Mtime, s.Ctime)
}

// StampOf is fi's stamp (stamp_linux.go, stamp_other.go).
func StampOf(fi fs.FileInfo) Stamp { return stampOf(fi) }
