package config

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/BurntSushi/toml"
)

// stateDir is the absolute state dir of the setting state_dir: relative
// to root unless absolute, the default when empty.
func stateDir(root, setting string) string {
	switch {
	case setting == "":
		setting = DefaultStateDir
	case filepath.IsAbs(setting):
		return filepath.Clean(setting)
	}
	return filepath.Join(root, setting)
}

// ReadStateDir returns the absolute state dir that the config file names,
// for the commands that need only that (gate status and log, testhook),
// as the decoder reads it: a mistake elsewhere in the config (an unknown
// key, a bad mapping) changes nothing.
//
// With a file that cannot be read, or a text that does not decode as TOML,
// it returns the error and, beside it, the best readable state dir
// (plainStateDir's). Gate status and log use it, so that the queue and the
// log stay readable while the config has mistakes; testhook reports the
// error instead.
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

// textStateDir returns the state dir config text keeps, without parsing
// it: plainStateDir's when it is sure, else the decoder's reading of
// [settings] alone (which decodes the whole text, but types nothing and
// checks nothing else); known is false for a text that does not decode.
func textStateDir(text []byte, root string) (dir string, known bool) {
	if setting, sure := plainStateDir(text); sure {
		return stateDir(root, setting), true
	}
	var raw struct {
		Settings struct {
			StateDir string `toml:"state_dir"`
		} `toml:"settings"`
	}
	if _, err := toml.Decode(string(text), &raw); err != nil {
		return "", false
	}
	return stateDir(root, raw.Settings.StateDir), true
}

// plainStateDir reads state_dir from config text without decoding it, and
// reports whether the answer is sure: the decoder's for every text that
// loads without mistakes. When no key can spell state_dir (no "state_dir"
// in the text and no \u or \U escape), the setting is absent. When a line
// `state_dir = "dir"` (or 'dir', with no escape, a comment allowed) stands
// under a [settings] header and no multi-line string opens before it, that
// line is the setting: any other definition would be a duplicate key, and
// a multi-line array or inline table around it a mistake of type or key.
// Otherwise it is not sure, and only a decode can tell; setting is then
// such a line's, if there is one, for the best readable guess.
func plainStateDir(data []byte) (setting string, sure bool) {
	if !mentionsStateDir(data) {
		return "", true // Load's test as the text streams by (cache.go)
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

// plainString reads the value text ` "value"  # comment` (or 'value')
// with no escape.
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
