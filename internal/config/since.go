package config

import (
	"os"
	"path/filepath"
	"time"

	"github.com/stopgate/stopgate/internal/regular"
)

// ChangedSince returns the paths of in whose file changed after t, by its
// status-change time (ctime, which no one but the clock sets: `touch -d`
// cannot move it back), or is gone. It is the only check there is for an
// entry the gate rebuilt from the transcript: its hashes are taken at the
// stop, so a rewrite before it would compare equal; the transcript's time
// of the read is when the prompt was armed.
func (in Inputs) ChangedSince(root string, t time.Time) []string {
	var changed []string
	for path := range in {
		file := path
		if !filepath.IsAbs(file) {
			file = filepath.Join(root, file)
		}
		fi, err := os.Stat(file)
		if err != nil || regular.StampOf(fi).Ctime > t.UnixNano() {
			changed = append(changed, path)
		}
	}
	return changed
}
