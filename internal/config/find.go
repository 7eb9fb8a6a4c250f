package config

import (
	"path/filepath"

	"github.com/stopgate/stopgate/internal/project"
)

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
func (c *Config) StateDir() string {
	if filepath.IsAbs(c.Settings.StateDir) {
		return filepath.Clean(c.Settings.StateDir)
	}
	return filepath.Join(c.Root, c.Settings.StateDir)
}

// PromptPath returns the absolute path of prompt key's file under prompts_dir.
func (c *Config) PromptPath(key string) string {
	return filepath.Join(c.Root, filepath.FromSlash(c.Paths(key)[0]))
}
