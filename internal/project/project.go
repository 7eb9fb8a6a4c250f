// Package project locates a stopgate project's root and relates paths to it.
package project

import (
	"os"
	"path/filepath"
	"strings"
)

// ConfigName is the file, at the project root, that holds the mappings.
const ConfigName = "mappings.toml"

// Root returns the project root: $CLAUDE_PROJECT_DIR, else the hook input's
// cwd, else the working directory; always absolute and clean.
func Root(getenv func(string) string, cwd, wd string) string {
	for _, dir := range []string{getenv("CLAUDE_PROJECT_DIR"), cwd, wd} {
		if dir == "" {
			continue
		}
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(wd, dir)
		}
		return filepath.Clean(dir)
	}
	return "/"
}

// Rel returns path relative to root with forward slashes, and false when
// path lies outside root. It is lexical: callers that act on a match also
// check symlinks with Inside.
func Rel(root, path string) (string, bool) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(root, path)
	}
	rel, err := filepath.Rel(root, filepath.Clean(path))
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// Display shows path as a person reads it in a message: relative to root,
// with forward slashes, when it lies inside root; else as it is. Both are
// taken as given (absolute, or relative to the same folder).
func Display(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.ToSlash(rel)
}

// Inside reports whether path, with symlinks resolved, lies inside root
// (also resolved). A path that does not exist is judged lexically.
func Inside(root, path string) bool {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	realPath, err := filepath.EvalSymlinks(path)
	if err != nil {
		if os.IsNotExist(err) {
			_, ok := Rel(root, path)
			return ok
		}
		return false
	}
	_, ok := Rel(realRoot, realPath)
	return ok
}

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
