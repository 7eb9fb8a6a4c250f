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
	f, err := readIgnore(root)
	if f.line == "" || err != nil {
		return err
	}
	if ignores(f.data, f.line) {
		fmt.Fprintf(env.Stdout, "%s: the state dir %s is already ignored\n", gitignoreFile, f.line)
		return nil
	}
	out := bytes.Clone(f.data)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	out = append(out, f.line+"\n"...)
	return f.write(env, out, "added "+f.line+" (the state dir is this machine's, not the team's)")
}

// removeIgnore takes the state dir's line, as gate init writes it, out of
// .gitignore, keeping every other byte.
func removeIgnore(env *cli.Env, root string) error {
	f, err := readIgnore(root)
	if f.line == "" || err != nil {
		return err
	}
	data, line := f.data, f.line
	var out []byte
	switch {
	case bytes.HasPrefix(data, []byte(line+"\n")):
		out = data[len(line)+1:]
	case bytes.Contains(data, []byte("\n"+line+"\n")):
		i := bytes.LastIndex(data, []byte("\n"+line+"\n"))
		out = append(data[:i+1:i+1], data[i+len(line)+2:]...)
	default:
		return nil
	}
	return f.write(env, out, "removed "+line)
}

// ignoreFile is the project's .gitignore and the state dir's line in it.
type ignoreFile struct {
	path, line string // line is "" when the state dir is outside the project
	data       []byte // nil when there is no file
}

// readIgnore reads the project's .gitignore, unless there is no line of
// the state dir to look for.
func readIgnore(root string) (ignoreFile, error) {
	f := ignoreFile{path: filepath.Join(root, gitignoreFile), line: ignoreLine(root)}
	if f.line == "" {
		return f, nil
	}
	data, err := os.ReadFile(f.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	f.data = data
	return f, nil
}

// write replaces the file with out, or removes it when out is blank
// (nothing but stopgate's line was there: gate init created it), and says
// what changed.
func (f ignoreFile) write(env *cli.Env, out []byte, said string) error {
	var err error
	if len(bytes.TrimSpace(out)) == 0 {
		err = os.Remove(f.path)
	} else {
		err = settings.WriteFile(f.path, out)
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", gitignoreFile, err)
	}
	fmt.Fprintf(env.Stdout, "%s: %s\n", gitignoreFile, said)
	return nil
}
