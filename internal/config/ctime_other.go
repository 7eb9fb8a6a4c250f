//go:build !linux

package config

import (
	"os"
	"time"
)

// changeTime is fi's modification time: elsewhere than Linux the gate does
// not read the status-change time.
func changeTime(fi os.FileInfo) time.Time { return fi.ModTime() }
