package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/regular"
)

// openText opens the config file through regular.Open: a named pipe
// planted under its name cannot hold the hook.
func openText(file string) (*os.File, error) {
	f, _, err := regular.Open(file)
	if errors.Is(err, regular.ErrNotRegular) {
		err = fmt.Errorf("%s is not a regular file", file)
	}
	return f, err
}

// readText is os.ReadFile through openText.
func readText(file string) ([]byte, error) {
	f, err := openText(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

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

// stateDir is the absolute state dir of the setting state_dir.
func stateDir(root, setting string) string {
	switch {
	case setting == "":
		setting = DefaultStateDir
	case filepath.IsAbs(setting):
		return filepath.Clean(setting)
	}
	return filepath.Join(root, setting)
}

// ReadStateDir returns the absolute state dir the config file names,
// whatever its other mistakes; else an error and the best guess.
func ReadStateDir(file, root string) (string, error) {
	text, err := readText(file)
	if err != nil {
		return stateDir(root, ""), err
	}
	cfg, p := parse(text, file, root)
	if cfg != nil {
		return cfg.StateDir(), nil // its mistakes are not in the TOML
	}
	setting, _ := plainStateDir(text)
	return stateDir(root, setting), fmt.Errorf("%w (the state dir cannot be read)", p.problems[0])
}

// textStateDir returns the state dir config text names: plainStateDir's
// when sure, else the decoder's; known is false when it does not decode.
func textStateDir(text []byte, root string) (dir string, known bool) {
	if setting, sure := plainStateDir(text); sure {
		return stateDir(root, setting), true
	}
	var raw rawFile // a text that does not decode into it does not parse either
	if _, err := toml.Decode(string(text), &raw); err != nil {
		return "", false
	}
	return stateDir(root, raw.Settings.StateDir), true
}

// plainStateDir reads state_dir without decoding: sure when nothing can
// spell the key, or a plain `state_dir = "dir"` line stands under
// [settings] with no multi-line string before it.
func plainStateDir(data []byte) (setting string, sure bool) {
	if !mentionsStateDir(data) {
		return "", true
	}
	const name = "state_dir"
	text := string(data)
	for off := 0; ; {
		j := strings.Index(text[off:], name)
		if j < 0 {
			return "", false
		}
		start := strings.LastIndexByte(text[:off+j], '\n') + 1
		line, _, _ := strings.Cut(text[start:], "\n")
		off += j + len(name)
		key, rest, ok := assignment(strings.TrimSpace(line))
		if !ok || strings.TrimSpace(key) != name || tableAt(text, start) != "[settings]" {
			continue // not the key at the start of a line, or not in [settings]
		}
		if v, ok := plainString(rest); ok {
			before := text[:start]
			return v, !strings.Contains(before, `"""`) && !strings.Contains(before, `'''`)
		}
	}
}

// mentionsStateDir reports whether text could spell state_dir: by name,
// or escaped (\u, \U).
func mentionsStateDir(text []byte) bool {
	for rest := text; ; {
		i := bytes.Index(rest, []byte("_dir")) // '_' is rare, 's' is not
		if i < 0 {
			return bytes.Contains(text, []byte(`\u`)) || bytes.Contains(text, []byte(`\U`))
		}
		if bytes.HasSuffix(rest[:i], []byte("state")) {
			return true
		}
		rest = rest[i+4:]
	}
}

// plainString reads the value text ` "value"  # comment` with no escape.
func plainString(v string) (string, bool) {
	v = cutComment(strings.TrimSpace(v))
	if len(v) < 2 || v[0] != '"' && v[0] != '\'' || v[len(v)-1] != v[0] {
		return "", false
	}
	q, v := v[0], v[1:len(v)-1]
	return v, strings.IndexByte(v, q) < 0 && !strings.Contains(v, `\`)
}

// tableAt returns the table header line in force at offset at, or "".
func tableAt(text string, at int) string {
	for at > 0 {
		start := strings.LastIndexByte(text[:at-1], '\n') + 1
		if line := strings.TrimSpace(text[start : at-1]); strings.HasPrefix(line, "[") {
			return cutComment(line)
		}
		at = start
	}
	return ""
}
