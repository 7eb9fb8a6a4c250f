package config

import (
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// The TOML decoder's errors, said for a person and located at the right
// line: it reports syntax errors at the character after the mistake (the
// next line, for a header left open), and type mismatches of an array
// table's key at that key's last occurrence, in Go's type names.

// decodeError turns a toml error into a Problem with its line.
func (p *parser) decodeError(err error) *Problem {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		n := pe.Position.Line
		if s := pe.Position.Start; s > 0 && s <= len(p.text) {
			// The offending character's own line, not the one after it
			// when that character is the newline.
			n = 1 + strings.Count(p.text[:s], "\n")
		}
		key := pe.LastKey
		if !p.definedOn(key, n) {
			key = "" // the last key parsed, not the one in error
		}
		return &Problem{File: p.file, Line: n, Key: key, Msg: pe.Message}
	}
	// Type mismatches come as `toml: line N (last key "k"): msg`.
	m := typeErr.FindStringSubmatch(err.Error())
	if m == nil {
		return &Problem{File: p.file, Msg: strings.TrimPrefix(err.Error(), "toml: ")}
	}
	key := m[2]
	if uq, err := strconv.Unquote(`"` + key + `"`); err == nil {
		key = uq
	}
	path := joinKey(splitKey(key))
	n, _ := strconv.Atoi(m[1])
	msg, hint := m[3], ""
	if t := typeMismatch.FindStringSubmatch(msg); t != nil {
		n = p.lineOfValue(path, t[1], n)
		msg, hint = fmt.Sprintf("is %s, want %s", tomlKind(t[1]), wantKind(path, t[2])), typeHint(path)
	} else if t := tableMismatch.FindStringSubmatch(msg); t != nil {
		msg, hint = fmt.Sprintf("is %s, want a table", tomlKind(t[1])), typeHint(path)
	}
	if n == 0 {
		n = p.lines.line(path) // the decoder knew no line for the key
	}
	return &Problem{File: p.file, Line: n, Key: key, Msg: msg, Hint: hint}
}

var (
	typeErr       = lazyRE(`^toml: (?:line (\d+) )?\(last key "((?:[^"\\]|\\.)*)"\): (.*)$`)
	typeMismatch  = lazyRE(`^incompatible types: TOML value has type (.+); destination has type (.+)$`)
	tableMismatch = lazyRE(`^type mismatch for .+: expected table but found (.+)$`)
)

// definedOn reports whether the key path is defined on line n.
func (p *parser) definedOn(key string, n int) bool {
	if key == "" {
		return false
	}
	path := unindex(joinKey(splitKey(key)))
	for _, l := range p.lines.every[path] {
		if l == n {
			return true
		}
	}
	return false
}

// lineOfValue picks, among the definitions of path, the first whose value
// is of the TOML type the decoder rejected; else the decoder's line.
func (p *parser) lineOfValue(path, goType string, fallback int) int {
	want := tomlKind(goType)
	text := strings.Split(p.text, "\n")
	for _, n := range p.lines.every[unindex(path)] {
		if n < 1 || n > len(text) {
			continue
		}
		if _, rest, ok := keyOf(strings.TrimSpace(text[n-1])); ok && valueKind(rest) == want {
			return n
		}
	}
	return fallback
}

// tomlKind names, in TOML's words, the Go type the decoder gave a value.
func tomlKind(goType string) string {
	switch {
	case goType == "string":
		return "a string"
	case strings.HasPrefix(goType, "int"):
		return "an integer"
	case strings.HasPrefix(goType, "float"):
		return "a float"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case strings.HasPrefix(goType, "map["):
		return "a table"
	case strings.HasPrefix(goType, "time."):
		return "a date-time"
	}
	return "a " + goType
}

// valueKind guesses the TOML type of a value from its text.
func valueKind(v string) string {
	v = strings.TrimSpace(v)
	switch {
	case v == "":
		return ""
	case v[0] == '"' || v[0] == '\'':
		return "a string"
	case v[0] == '[':
		return "an array"
	case v[0] == '{':
		return "a table"
	case strings.HasPrefix(v, "true") || strings.HasPrefix(v, "false"):
		return "a boolean"
	case strings.ContainsAny(v, "T:") && !strings.HasPrefix(v, "0x"):
		return "a date-time"
	case strings.ContainsAny(v, ".eE") && !strings.HasPrefix(v, "0x"), strings.Contains(v, "inf"), strings.Contains(v, "nan"):
		return "a float"
	}
	return "an integer"
}

// wantKind names the type a key wants, from the decoder's destination kind.
func wantKind(path, dst string) string {
	switch dst {
	case "integer":
		return "an integer"
	case "boolean":
		return "a boolean"
	case "float":
		return "a float"
	case "map":
		return "a table"
	case "slice":
		if strings.EqualFold(path, "mapping") {
			return "an array of tables"
		}
		return "an array"
	}
	return "a " + dst
}

// typeHint shows how to write the keys most often written with the wrong
// type.
func typeHint(path string) string {
	switch {
	case strings.EqualFold(path, "mapping"):
		return `each mapping is a [[mapping]] table with prompt = "key" and validators = ["name", …]`
	case unindex(path) == "mapping.validators":
		return `validators = ["name", …], a list even for one`
	case strings.HasSuffix(path, ".timeout"):
		return `durations are strings: timeout = "10s"`
	case strings.HasPrefix(path, "validators.") && strings.Count(path, ".") == 1:
		return `each validator is a table: [validators.NAME] with file = "path" or run = "command"`
	}
	return ""
}

// unknownKeys reports each key no field decoded, at its own line: keys of
// array tables come unindexed, so the i-th report of a key is its i-th
// definition. Keys under an unknown table are not reported again. A key
// spelt with other letter case (Prompt, [[Mapping]]) is unknown too: TOML
// keys are case-sensitive, but the decoder matches fields regardless of
// case and would quietly accept it.
func (p *parser) unknownKeys(md toml.MetaData) {
	seen := map[string]int{}
	var reported []string
	report := func(k toml.Key, hint string) {
		path := strings.Join(k, ".")
		for _, r := range reported {
			if strings.HasPrefix(path, r+".") {
				return // under a table already reported
			}
		}
		reported = append(reported, path)
		// Located by the unquoted parts, shown as TOML writes the key.
		p.addAt(k.String(), p.lines.nth(path, seen[path]), "unknown key", hint)
		seen[path]++
	}
	undecoded := map[string]bool{}
	for _, k := range md.Undecoded() {
		undecoded[k.String()] = true
	}
	for _, k := range md.Keys() {
		if undecoded[k.String()] {
			report(k, hintFor(k))
			continue
		}
		i, want := miscased(k)
		if i < 0 || i < len(k)-1 && seen[strings.Join(k[:i+1], ".")] > 0 {
			continue // fine, or under a miscased table already reported
		}
		report(k[:i+1], fmt.Sprintf("keys are case-sensitive: write %q", want))
	}
}

// fields are the keys each table takes, from the raw shapes' tags.
var fields = map[string][]string{
	"":           tags(reflect.TypeOf(rawFile{})),
	"settings":   tags(reflect.TypeOf(rawSettings{})),
	"mapping":    tags(reflect.TypeOf(rawMapping{})),
	"validators": tags(reflect.TypeOf(rawValidator{})),
}

func tags(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		names = append(names, strings.Split(t.Field(i).Tag.Get("toml"), ",")[0])
	}
	return names
}

// miscased returns the index of the first part of k that matches a known
// key only when letter case is ignored, and that key; -1 if none does.
func miscased(k toml.Key) (int, string) {
	check := func(i int, table string) (int, string) {
		if i >= len(k) {
			return -1, ""
		}
		for _, f := range fields[table] {
			if k[i] != f && strings.EqualFold(k[i], f) {
				return i, f
			}
		}
		return -1, ""
	}
	if i, f := check(0, ""); i >= 0 {
		return i, f
	}
	switch k[0] {
	case "settings", "mapping":
		return check(1, k[0])
	case "validators":
		return check(2, "validators") // k[1] is the validator's name
	}
	return -1, ""
}
