package reuse

import (
	"bytes"
	"crypto/sha256"
	"encoding/gob"
	"os"
	"path/filepath"
	"time"

	"github.com/stopgate/stopgate/internal/atomicfile"
	"github.com/stopgate/stopgate/internal/regular"
)

// stat is a file's stat as the cache compares it.
type stat = regular.Stamp

// racy is how long after a file's last change its recorded hash is not
// trusted: the file may have changed again within the clock's granularity
// and kept the same stat.
const racy = int64(time.Second)

// cacheFormat is the cache's format; a file of another is no cache.
const cacheFormat = "stopgate-fingerprint-cache 2"

// cache maps a file's path to its stat and hash when it was recorded, at
// time At (Unix nanoseconds). Its file is the gob encoding of it.
type cache struct {
	Format  string
	At      int64
	Entries map[string]cached
}

type cached struct {
	St  stat
	Sum [sha256.Size]byte
}

func newCache(now time.Time) *cache {
	return &cache{Format: cacheFormat, At: now.UnixNano(), Entries: map[string]cached{}}
}

// get returns the recorded hash of rel when its stat is as recorded and it
// had not changed for a while when it was recorded.
func (c *cache) get(rel string, st stat) ([sha256.Size]byte, bool) {
	if c == nil {
		return [sha256.Size]byte{}, false
	}
	e, ok := c.Entries[rel]
	if !ok || e.St != st || st.Changed()+racy > c.At {
		return [sha256.Size]byte{}, false
	}
	return e.Sum, true
}

// keep carries rel's entry in old over, unchecked: a later get checks it.
func (c *cache) keep(old *cache, rel string) {
	if old == nil {
		return
	}
	if e, ok := old.Entries[rel]; ok && e.St.Changed()+racy <= old.At {
		c.Entries[rel] = e
	}
}

func (c *cache) put(f File) {
	c.Entries[f.Path] = cached{St: f.st, Sum: f.Sum}
}

// loadCache reads the cache at path. A cache that is missing or does not
// decode is no cache (every file is hashed); one written after now is
// ErrClock.
func loadCache(path string, now time.Time) (*cache, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	var c cache
	if gob.NewDecoder(f).Decode(&c) != nil || c.Format != cacheFormat {
		return nil, nil
	}
	if c.Entries == nil {
		c.Entries = map[string]cached{} // gob leaves an empty map out
	}
	if c.At > now.UnixNano() {
		return nil, ErrClock
	}
	return &c, nil
}

func (c *cache) save(path string) error {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(c); err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, b.Bytes(), atomicfile.Options{TempPrefix: ".fingerprint-", NoSync: true})
}
