package project

import (
	"os"
	"path/filepath"
)

// Find returns the project root for a command a person runs: the
// $CLAUDE_PROJECT_DIR of a hook's environment, else the nearest directory
// from wd upwards that holds mappings.toml, so that `gate status` works
// from any subdirectory, else wd itself.
func Find(getenv func(string) string, wd string) string {
	if dir := getenv("CLAUDE_PROJECT_DIR"); dir != "" {
		return Root(getenv, "", wd)
	}
	wd = filepath.Clean(wd)
	for dir := wd; ; {
		if st, err := os.Stat(filepath.Join(dir, ConfigName)); err == nil && !st.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return wd
		}
		dir = parent
	}
}
