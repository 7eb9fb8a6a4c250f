package config

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/stopgate/stopgate/internal/regular"
)

// openText opens the config file for reading through regular.Open, so
// that a named pipe (or a device) planted under its name cannot hold the
// hook. A refusal is an error, which the gate answers with a halt like any
// config it cannot read.
func openText(file string) (*os.File, error) {
	f, _, err := regular.Open(file)
	if errors.Is(err, regular.ErrNotRegular) {
		err = fmt.Errorf("%s is not a regular file", file)
	}
	return f, err
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
