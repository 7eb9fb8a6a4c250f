//go:build !linux

package statedir

// Holders returns nil: only Linux says who holds a lock.
func Holders(path string) []Holder { return nil }
