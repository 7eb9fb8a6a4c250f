package reuse

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/atomicfile"
)

// stat is a file's stat as the cache compares it.
type stat struct {
	size, mtime, ctime int64
	ino                uint64
	mode               uint32
}

// changed is the later of the file's modification and change times.
func (s stat) changed() int64 { return max(s.mtime, s.ctime) }

// racy is how long after a file's last change its recorded hash is not
// trusted: the file may have changed again within the clock's granularity
// and kept the same stat.
const racy = int64(time.Second)

// cacheMagic starts the cache file; a file without it is no cache.
const cacheMagic = "stopgate-fingerprint-cache 1"

// cache maps a file's path to its stat and hash when it was recorded, at
// time at (Unix nanoseconds).
type cache struct {
	at      int64
	entries map[string]cached
}

type cached struct {
	st  stat
	sum [sha256.Size]byte
}

func newCache(now time.Time) *cache {
	return &cache{at: now.UnixNano(), entries: map[string]cached{}}
}

// get returns the recorded hash of rel when its stat is as recorded and it
// had not changed for a while when it was recorded.
func (c *cache) get(rel string, st stat) ([sha256.Size]byte, bool) {
	if c == nil {
		return [sha256.Size]byte{}, false
	}
	e, ok := c.entries[rel]
	if !ok || e.st != st || st.changed()+racy > c.at {
		return [sha256.Size]byte{}, false
	}
	return e.sum, true
}

// keep carries rel's entry in old over, unchecked: a later get checks it.
func (c *cache) keep(old *cache, rel string) {
	if old == nil {
		return
	}
	if e, ok := old.entries[rel]; ok && e.st.changed()+racy <= old.at {
		c.entries[rel] = e
	}
}

func (c *cache) put(f File) {
	c.entries[f.Path] = cached{st: f.st, sum: f.Sum}
}

// loadCache reads the cache at path. A cache that is missing or does not
// parse is no cache (every file is hashed); one written after now is
// ErrClock.
func loadCache(path string, now time.Time) (*cache, error) {
	if path == "" {
		return nil, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, nil
	}
	c, err := parseCache(data)
	if err != nil {
		return nil, nil
	}
	if c.at > now.UnixNano() {
		return nil, ErrClock
	}
	return c, nil
}

var errCache = errors.New("malformed cache")

// The cache's text: the magic and the time it was written, then one line
// a file: its path, a NUL, then size, mtime, ctime, inode, mode and hash.
func parseCache(data []byte) (*cache, error) {
	head, rest, ok := bytes.Cut(data, []byte{'\n'})
	magic, at, ok2 := bytes.Cut(head, []byte{' ', '@'})
	if !ok || !ok2 || string(magic) != cacheMagic {
		return nil, errCache
	}
	t, err := strconv.ParseInt(string(at), 10, 64)
	if err != nil {
		return nil, errCache
	}
	c := &cache{at: t, entries: map[string]cached{}}
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte{'\n'})
		rel, fields, ok := bytes.Cut(line, []byte{0})
		f := bytes.Fields(fields)
		if !ok || len(f) != 6 {
			return nil, errCache
		}
		var n [5]int64
		for i := range n {
			if n[i], err = strconv.ParseInt(string(f[i]), 10, 64); err != nil {
				return nil, errCache
			}
		}
		var e cached
		if k, err := hex.Decode(e.sum[:], f[5]); err != nil || k != sha256.Size {
			return nil, errCache
		}
		e.st = stat{size: n[0], mtime: n[1], ctime: n[2], ino: uint64(n[3]), mode: uint32(n[4])}
		c.entries[string(rel)] = e
	}
	return c, nil
}

func (c *cache) save(path string) error {
	b := make([]byte, 0, 128*len(c.entries))
	b = fmt.Appendf(b, "%s @%d\n", cacheMagic, c.at)
	for rel, e := range c.entries {
		if strings.ContainsAny(rel, "\n\x00") {
			continue // a name the line format cannot hold: hashed at every stop
		}
		b = append(append(b, rel...), 0)
		for _, n := range []int64{e.st.size, e.st.mtime, e.st.ctime, int64(e.st.ino), int64(e.st.mode)} {
			b = append(strconv.AppendInt(b, n, 10), ' ')
		}
		b = append(hex.AppendEncode(b, e.sum[:]), '\n')
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, b, atomicfile.Options{TempPrefix: ".fingerprint-", NoSync: true})
}
