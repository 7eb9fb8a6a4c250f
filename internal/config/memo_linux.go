package config

import (
	"os"
	"syscall"
)

func fingerprintOf(info os.FileInfo) fingerprint {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fingerprint{}
	}
	return fingerprint{
		dev: uint64(st.Dev), ino: st.Ino, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(),
	}
}
