package testhook

import (
	"errors"
	"io/fs"

	"github.com/stopgate/stopgate/internal/config"
)

// stateDir returns the state dir the project's mappings.toml names, or the
// default when there is no mappings.toml (config.ReadStateDir). A mistake
// elsewhere in the file is the gate's to report, at stop time, and does
// not stop a test run; a config the state dir cannot be read from does:
// the runs would be stored where the gate does not look.
func stateDir(root, configFile, dir string) (string, error) {
	sd, err := config.ReadStateDir(config.Path(root, configFile, dir), root)
	if err != nil && !(configFile == "" && errors.Is(err, fs.ErrNotExist)) {
		return "", err
	}
	return sd, nil
}
