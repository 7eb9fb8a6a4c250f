package config

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
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
// as Load reads it: a mistake elsewhere in the config (an unknown key, a
// bad mapping) changes nothing.
//
// With a file that cannot be read, or a text that does not decode as TOML,
// it returns the error and, beside it, the best readable state dir
// (guessStateDir). Gate status and log use it, so that the queue and the
// log stay readable while the config has mistakes; testhook reports the
// error instead.
func ReadStateDir(file, root string) (string, error) {
	if cfg, err := Load(file, root); err == nil {
		return cfg.StateDir(), nil
	}
	text, err := os.ReadFile(file)
	if err != nil {
		return stateDir(root, ""), err
	}
	cfg, p := parse(text, file, root)
	if cfg != nil {
		return cfg.StateDir(), nil // its mistakes are not in the TOML
	}
	return stateDir(root, guessStateDir(text)), fmt.Errorf("%w (the state dir cannot be read)", p.problems[0])
}

// guessStateDir returns the setting state_dir of a text before it is
// decoded, for where to look for its cache: the value after the first
// `state_dir = "dir"` (or 'dir', with no escape; the key may be quoted,
// dotted or in an inline table), else "". It is only a guess (the key may
// stand in another table, or inside a multi-line string): the decoder is
// the one reader of state_dir. A cache found at the guess holds the exact
// text it was decoded from, and its settings are that text's, wherever it
// was found.
func guessStateDir(text []byte) string {
	const name = "state_dir"
	for i := 0; ; {
		j := bytes.Index(text[i:], []byte(name))
		if j < 0 {
			return ""
		}
		i += j + len(name)
		rest := text[i:]
		if end := bytes.IndexByte(rest, '\n'); end >= 0 {
			rest = rest[:end]
		}
		rest = bytes.TrimLeft(rest, `"'`) // a quoted key's closing quote
		if v, ok := plainString(rest); ok {
			return v
		}
	}
}

// plainString reads ` = "value"  # comment` with no escapes, in an
// inline table or not.
func plainString(s []byte) (string, bool) {
	s = bytes.TrimSpace(s)
	if len(s) == 0 || s[0] != '=' {
		return "", false
	}
	s = bytes.TrimSpace(s[1:])
	if len(s) < 2 || s[0] != '"' && s[0] != '\'' {
		return "", false
	}
	end := bytes.IndexByte(s[1:], s[0])
	if end < 0 {
		return "", false
	}
	v, rest := s[1:1+end], bytes.TrimSpace(s[2+end:])
	if bytes.ContainsAny(v, "\\\n") || len(rest) > 0 && !bytes.ContainsAny(rest[:1], "#,}") {
		return "", false
	}
	return string(v), true
}
