package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
)

const gitignoreFile = ".gitignore"

// ignoreLine is the .gitignore line of the project's state dir, "" when
// the state dir is outside the project: its queue and logs are one
// machine's, never committed.
func ignoreLine(root string) string {
	dir, _ := config.ReadStateDir(filepath.Join(root, project.ConfigName), root)
	rel, ok := project.Rel(root, dir)
	if !ok || rel == "." {
		return ""
	}
	return "/" + rel + "/"
}

// ignores reports whether text has line, or the same path written
// without its leading or trailing slash.
func ignores(text []byte, line string) bool {
	bare := bytes.Trim([]byte(line), "/")
	for _, l := range bytes.Split(text, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) > 0 && bytes.Equal(bytes.Trim(l, "/"), bare) {
			return true
		}
	}
	return false
}

// writeIgnore appends the state dir's line to .gitignore, creating it if
// missing; every byte already there is kept, and a second run changes
// nothing.
func writeIgnore(env *cli.Env, root string) error {
	line := ignoreLine(root)
	if line == "" {
		return nil
	}
	path := filepath.Join(root, gitignoreFile)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if ignores(data, line) {
		fmt.Fprintf(env.Stdout, "%s: the state dir %s is already ignored\n", gitignoreFile, line)
		return nil
	}
	out := bytes.Clone(data)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, line+"\n"...)
	if err := settings.WriteFile(path, out); err != nil {
		return fmt.Errorf("writing %s: %w", gitignoreFile, err)
	}
	fmt.Fprintf(env.Stdout, "%s: added %s (the state dir is this machine's, not the team's)\n", gitignoreFile, line)
	return nil
}
