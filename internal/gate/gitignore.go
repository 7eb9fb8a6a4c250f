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
	return editIgnore(env, root, func(data []byte, line string) ([]byte, string) {
		if ignores(data, line) {
			return nil, "the state dir " + line + " is already ignored"
		}
		out := bytes.Clone(data)
		if len(out) > 0 && out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
		return append(out, line+"\n"...), "added " + line + " (the state dir is this machine's, not the team's)"
	})
}

// removeIgnore takes the state dir's line, as gate init writes it, out of
// .gitignore, keeping every other byte.
func removeIgnore(env *cli.Env, root string) error {
	return editIgnore(env, root, func(data []byte, line string) ([]byte, string) {
		i := bytes.LastIndex(append([]byte("\n"), data...), []byte("\n"+line+"\n"))
		if bytes.HasPrefix(data, []byte(line+"\n")) {
			i = 0
		}
		if i < 0 {
			return nil, ""
		}
		return append(data[:i:i], data[i+len(line)+1:]...), "removed " + line
	})
}

// editIgnore rewrites .gitignore as edit returns it from its bytes (nil:
// no file) and the state dir's line, and says what edit says; nil leaves
// the file as it is. Nothing is done for a state dir outside the project,
// and a file left blank (gate init created it) is removed.
func editIgnore(env *cli.Env, root string, edit func(data []byte, line string) ([]byte, string)) error {
	line := ignoreLine(root)
	if line == "" {
		return nil
	}
	path := filepath.Join(root, gitignoreFile)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	out, said := edit(data, line)
	switch {
	case out == nil:
	case len(bytes.TrimSpace(out)) == 0:
		err = os.Remove(path)
	default:
		err = settings.WriteFile(path, out)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", gitignoreFile, err)
	}
	if said != "" {
		fmt.Fprintf(env.Stdout, "%s: %s\n", gitignoreFile, said)
	}
	return nil
}
