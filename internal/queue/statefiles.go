package queue

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/atomicfile"
)

// TempPrefix starts the name of every file being written in the state
// dir: a file so named that a writer holding the lock finds was left by a
// killed writer.
const TempPrefix = ".tmp-"

// WriteJSON writes v to path as indented JSON, crash-safe: a temp file in
// the same folder, fsynced and renamed into place, and the folder fsynced,
// so a reader sees the old content or the new, never a part, even across
// a power cut. The folder must exist. Call it under the lock, so that two
// writers cannot interleave a read-modify-write.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(path, append(data, '\n'))
}

// WriteFile is WriteJSON for bytes.
func WriteFile(path string, data []byte) error {
	return atomicfile.Write(path, data, atomicfile.Options{TempPrefix: TempPrefix})
}

// ReadJSON reads a file written by WriteJSON. Readers need no lock: a
// rename is atomic.
func ReadJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

// Leftover names files a killed writer leaves: those whose names begin
// with Prefix, once older than Age, the longest a live writer keeps one.
type Leftover struct {
	Prefix string
	Age    time.Duration
}

// Temps are the temp files of WriteJSON and WriteFile, which write only
// under the lock: any a lock holder sees is an orphan, whatever its age.
var Temps = Leftover{Prefix: TempPrefix}

// Sweep removes from dir the leftovers of each kind, in one read of it.
func Sweep(dir string, kinds ...Leftover) {
	des, _ := os.ReadDir(dir)
	for _, de := range des {
		for _, k := range kinds {
			if !strings.HasPrefix(de.Name(), k.Prefix) {
				continue
			}
			if info, err := de.Info(); k.Age == 0 || err == nil && time.Since(info.ModTime()) > k.Age {
				os.Remove(filepath.Join(dir, de.Name()))
			}
			break
		}
	}
}

// Segment escapes s into one safe path segment: no "/", and no leading
// dot, so it can never be "..", a temp file, or hidden. Session ids and
// prompt keys name folders and files this way.
func Segment(s string) string {
	e := url.PathEscape(s)
	if strings.HasPrefix(e, ".") {
		e = "%2E" + e[1:]
	}
	return e
}

// Unsegment reverses Segment.
func Unsegment(s string) string {
	u, err := url.PathUnescape(s)
	if err != nil {
		return s
	}
	return u
}
