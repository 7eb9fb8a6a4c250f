package config

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// openText opens the config file for reading without letting a named pipe
// (or a device) planted under its name hold the hook: opened
// non-blocking, refused unless regular. A refusal is an error, which the
// gate answers with a halt like any config it cannot read.
func openText(file string) (*os.File, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = fmt.Errorf("%s is not a regular file", file)
		}
		return nil, err
	}
	return f, nil
}

// readText is os.ReadFile of the config file, through openText.
func readText(file string) ([]byte, error) {
	f, err := openText(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
