package config

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/shell"
)

// Inputs are what a mapping's verdict depends on beyond the agent's work:
// mappings.toml and its run validators' files, root-relative path to
// SHA-256. The gate tells the human which changed since arming: a check
// that passes because its script was rewritten must not pass in silence.
type Inputs map[string]string

// maxInputFile bounds how much of a program a hook hashes.
const maxInputFile = 4 << 20

// InputsOf returns the inputs of m: the config's hash key and the
// RunInputs of each run validator.
func InputsOf(root, file string, key [sha256.Size]byte, m *Mapping, validator func(string) (*Validator, error)) (Inputs, error) {
	in := Inputs{project.Display(root, file): hex.EncodeToString(key[:])}
	for _, name := range m.Validators {
		v, err := validator(name)
		if err != nil {
			return nil, err
		}
		if v != nil && v.Run != "" {
			RunInputs(in, v.Run, root, maxInputFile)
		}
	}
	return in, nil
}

// RunInputs adds to in the files inside root that run executes or sources
// (shell.Files) and that a plain word of it names, each hashed up to limit
// bytes; unread is an executed file it could not hash.
func RunInputs(in Inputs, run, root string, limit int64) (unread bool) {
	for _, f := range shell.Files(run, root) {
		if r, inside := project.Rel(root, f.Path); inside {
			if sum, ok := digest(f.Path, limit); ok {
				in[r] = sum
			} else {
				unread = true
			}
		}
	}
	for _, path := range strings.Fields(run) {
		if !filepath.IsAbs(path) {
			path = filepath.Join(root, path)
		}
		if r, inside := project.Rel(root, path); inside {
			if sum, ok := digest(path, limit); ok {
				in[r] = sum
			}
		}
	}
	return unread
}

// Changed returns the paths of in whose content changed or is gone.
func (in Inputs) Changed(root string, configKey [sha256.Size]byte, configFile string) []string {
	var changed []string
	cfg := project.Display(root, configFile)
	for path, was := range in {
		now := ""
		if path == cfg {
			now = hex.EncodeToString(configKey[:])
		} else if sum, ok := digest(filepath.Join(root, path), maxInputFile); ok {
			now = sum
		}
		if now != was {
			changed = append(changed, path)
		}
	}
	return changed
}

// digest is the SHA-256 of a regular file's first limit bytes.
func digest(path string, limit int64) (string, bool) {
	f, _, err := regular.Open(path) // a named pipe holds no hook
	if err != nil {
		return "", false
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, io.LimitReader(f, limit)); err != nil {
		return "", false
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

// Key is the SHA-256 of the config's text.
func (c *Config) Key() [sha256.Size]byte { return c.key }

// ChangedSince returns the paths of in whose file changed after t by its
// ctime (which `touch -d` cannot move back), or is gone: the check of an
// entry rebuilt from the transcript, whose hashes were taken at the stop.
func (in Inputs) ChangedSince(root string, t time.Time) []string {
	var changed []string
	for path := range in {
		file := path
		if !filepath.IsAbs(file) {
			file = filepath.Join(root, file)
		}
		fi, err := os.Stat(file)
		if err != nil || regular.StampOf(fi).Ctime > t.UnixNano() {
			changed = append(changed, path)
		}
	}
	return changed
}
