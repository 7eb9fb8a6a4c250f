package config

import (
	"encoding/binary"
	"time"
)

// fingerprint is what stat says of a config file: device, inode, size,
// modification and change times. The index cache is keyed by the SHA-256
// of the config's text, and records the fingerprint the file had when that
// text was read, so that a later load whose stat shows the same
// fingerprint can skip reading and hashing the file: for a config of
// thousands of mappings, hashing alone costs more than the rest of a hook.
//
// Trusting a fingerprint is git's "racily clean" rule. Every write to a
// file sets its change time to the current time, which user programs
// cannot set back. But a time has a granularity (the kernel's clock tick,
// or a whole second on some file systems), so a second write within the
// same tick as the first, of the same size, would leave the fingerprint
// unchanged. A fingerprint is therefore trusted only if both its times lie
// at least settle before the cache file's own modification time, which the
// same file system clock wrote after the text was read: any later write to
// the config then has a later change time. Otherwise the text is read and
// hashed, as it always is on the first load after a change.
type fingerprint struct {
	dev, ino           uint64
	size, mtime, ctime int64 // times in Unix nanoseconds
}

const printSize = 5 * 8

// settle is the margin of the racily-clean rule: above any file system's
// timestamp granularity (FAT's is two seconds).
var settle = 2 * time.Second

func (p fingerprint) put(b []byte) {
	for i, v := range []uint64{p.dev, p.ino, uint64(p.size), uint64(p.mtime), uint64(p.ctime)} {
		binary.LittleEndian.PutUint64(b[8*i:], v)
	}
}

func getFingerprint(b []byte) fingerprint {
	u := func(i int) uint64 { return binary.LittleEndian.Uint64(b[8*i:]) }
	return fingerprint{dev: u(0), ino: u(1), size: int64(u(2)), mtime: int64(u(3)), ctime: int64(u(4))}
}

// settledBefore reports whether p may be trusted by a cache written at t.
func (p fingerprint) settledBefore(t time.Time) bool {
	limit := t.Add(-settle).UnixNano()
	return p != fingerprint{} && p.mtime < limit && p.ctime < limit
}
