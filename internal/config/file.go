package config

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/regular"
)

// openText opens the config file through regular.Open: a named pipe
// planted under its name cannot hold the hook.
func openText(file string) (*os.File, error) {
	f, _, err := regular.Open(file)
	if errors.Is(err, regular.ErrNotRegular) {
		err = fmt.Errorf("%s is not a regular file", file)
	}
	return f, err
}

// readText is os.ReadFile through openText.
func readText(file string) ([]byte, error) {
	f, err := openText(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// Path returns the config file of root: override when given (relative to
// dir), else <root>/mappings.toml.
func Path(root, override, dir string) string {
	switch {
	case override == "":
		return filepath.Join(root, project.ConfigName)
	case filepath.IsAbs(override):
		return override
	}
	return filepath.Join(dir, override)
}

// StateDir returns the absolute state dir.
func (c *Config) StateDir() string { return stateDir(c.Root, c.Settings.StateDir) }

// PromptPath returns the absolute path of key's file: the first of its
// Names' files that exists, else under prompts_dir; "" for a plugin's.
func (c *Config) PromptPath(key string) string {
	fs := c.Files(key)
	if len(fs) == 0 {
		return ""
	}
	return filepath.Join(c.Root, filepath.FromSlash(cmp.Or(c.existing(key), fs[0])))
}

// existing returns the first file among key's Names that exists, or "".
func (c *Config) existing(key string) string {
	for _, f := range c.Files(key) {
		if st, err := os.Stat(filepath.Join(c.Root, filepath.FromSlash(f))); err == nil && !st.IsDir() {
			return f
		}
	}
	return ""
}
