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
// mappings.toml and the files its run validators execute, each with the
// SHA-256 of its content, keyed by a path relative to the root ("" for a
// file that is gone). Detect records them when it arms a prompt; the gate
// tells the human which changed before the stop was judged (a check that
// passes because its script was rewritten must not pass in silence).
type Inputs map[string]string

// maxInputFile bounds how much of a program is hashed: past it, a change
// in the tail goes unseen, and reading a huge binary would cost a hook.
const maxInputFile = 4 << 20

// InputsOf returns the inputs of m: the config file's text (given as its
// hash, key) and the RunInputs of each run validator.
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

// RunInputs adds to in the inputs of the run line run: the files inside
// root that shell.Files resolves (the program, and the files a shell
// script sources: the files the guard protects), and every other file
// inside root that a plain word of run names (a fixture), each hashed up
// to limit bytes. unread is a resolved file it could not hash, left out.
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
	for _, w := range strings.Fields(run) {
		path := w
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

// Changed returns the paths of in whose content is not what it was, sorted
// as given by keys; a file gone since counts as changed.
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
	f, _, err := regular.Open(path) // a named pipe left under a fixture's name holds no hook
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

// ChangedSince returns the paths of in whose file changed after t, by its
// status-change time (ctime, which no one but the clock sets: `touch -d`
// cannot move it back), or is gone. It is the only check there is for an
// entry the gate rebuilt from the transcript: its hashes are taken at the
// stop, so a rewrite before it would compare equal; the transcript's time
// of the read is when the prompt was armed.
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
