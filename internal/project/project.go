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

// Rel returns path relative to root with forward slashes; false outside root. Lexical: Inside follows links.
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

// Display is path relative to root (forward slashes) when inside it, else path.
func Display(root, path string) string {
	rel, err := filepath.Rel(root, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return filepath.ToSlash(rel)
}

// Inside reports whether path lies inside root, links resolved (lexically when it does not exist).
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

// Find returns the project root for a command a person runs:
// $CLAUDE_PROJECT_DIR, else the nearest folder up from wd with mappings.toml, else wd.
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
