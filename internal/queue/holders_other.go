//go:build !linux

package queue

// Holders returns nil: only Linux says who holds a lock.
func Holders(path string) []Holder { return nil }
