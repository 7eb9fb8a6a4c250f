package config

import (
	"cmp"
	"os"
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
func (c *Config) StateDir() string { return stateDir(c.Root, c.Settings.StateDir) }

// PromptPath returns the absolute path of prompt key's file: the first of
// its Names' files that exists, else its place under prompts_dir; "" for
// a plugin's command, whose file is the plugin's.
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
