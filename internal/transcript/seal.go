package transcript

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
)

// sealWindow is how many bytes before an offset Seal hashes: the last
// lines before it, enough to tell the transcript a mark was written
// against from another, and cheap to read at every stop.
const sealWindow = 4 << 10

// ErrPastEnd is a Seal asked for an offset past the end of the file.
var ErrPastEnd = errors.New("offset past the end of the transcript")

// Seal returns the SHA-256 of the sealWindow bytes of the transcript at
// path just before end: what the gate keeps with a reconciliation mark
// and checks it against before it trusts the mark. Appending to the file
// does not change it; replacing or rewriting what comes before end does.
func Seal(path string, end int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if end < 0 || end > fi.Size() {
		return "", ErrPastEnd
	}
	from := max(0, end-sealWindow)
	h := sha256.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, from, end-from)); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
