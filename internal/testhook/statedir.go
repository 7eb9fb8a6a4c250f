package testhook

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/project"
)

// stateDir returns the state dir the project's mappings.toml names, or the
// default when there is no mappings.toml. Only [settings] state_dir is
// read: the runner needs no more, so a mistake elsewhere in the file (the
// gate's to report, at stop time) does not stop a test run, and no mapping
// is parsed or regex compiled on the way to answering "next".
func stateDir(root, configFile, dir string) (string, error) {
	path := config.Path(root, configFile, dir)
	data, err := os.ReadFile(path)
	if err != nil {
		if configFile == "" && errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(root, config.DefaultStateDir), nil
		}
		return "", err
	}
	var raw struct {
		Settings struct {
			StateDir string `toml:"state_dir"`
		} `toml:"settings"`
	}
	if _, err := toml.Decode(string(data), &raw); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return "", fmt.Errorf("%s:%d: %s (the state dir cannot be read)", project.Display(root, path), pe.Position.Line, pe.Message)
		}
		return "", fmt.Errorf("%s: %v (the state dir cannot be read)", project.Display(root, path), err)
	}
	sd := raw.Settings.StateDir
	switch {
	case sd == "":
		sd = config.DefaultStateDir
	case filepath.IsAbs(sd):
		return filepath.Clean(sd), nil
	}
	return filepath.Join(root, sd), nil
}
