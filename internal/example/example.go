// Package example is stopgate's own example project, the one at the root
// of this repository: what make demo plays on, and what tests, end-to-end
// scenarios and benchmarks start from. No hook program imports it.
package example

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/project"
)

// parts lists, relative to the repository root, the parts of the example
// project.
var parts = []string{project.ConfigName, "src/prompts", ".claude/commands", "validators"}

// Copy copies the example project from the repository at repo into dst,
// keeping executable bits.
func Copy(repo, dst string) error {
	for _, p := range parts {
		if err := CopyTree(filepath.Join(repo, p), filepath.Join(dst, p)); err != nil {
			return err
		}
	}
	return nil
}

// CopyTree copies the file or tree at src to dst, keeping permissions.
func CopyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		return os.WriteFile(target, data, info.Mode().Perm())
	})
}
