package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"
)

// syntaxError turns the decoder's error into a Problem, for TOML that does
// not parse (a value of the wrong type is typeCheck's), at SyntaxLine.
func (p *parser) syntaxError(err error) *Problem {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		// A mismatch the library found decoding into the shapes, where
		// typeCheck, reading keys as written, found none (validators and
		// valIdators both): its text alone says the line.
		msg := strings.TrimPrefix(err.Error(), "toml: ")
		var n int
		if _, err := fmt.Sscanf(msg, "line %d", &n); err != nil {
			n = 0
		}
		return &Problem{File: p.file, Line: n, Msg: msg}
	}
	n := SyntaxLine(p.pos.text, pe)
	key := pe.LastKey
	if key != "" && !slices.Contains(p.pos.all().every[unindex(normKey(key))], n) {
		key = "" // the last key parsed, not the one in error
	}
	return &Problem{File: p.file, Line: n, Key: key, Msg: pe.Message}
}

// SyntaxLine returns the line of the mistake a ParseError of text is
// about. The library's Position.Line is that of the character after it,
// which for a header left open ("[[test]" then a newline) is the next
// line: the line is taken from the offending character's offset. A TOML
// tests file of testhook is located by it too.
func SyntaxLine(text string, pe toml.ParseError) int {
	if s := pe.Position.Start; s > 0 && s <= len(text) {
		return 1 + strings.Count(text[:s], "\n")
	}
	return pe.Position.Line
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

// unknownKeys reports each key the decoder did not read, at its own line:
// keys of array tables come unindexed, so the i-th report of a key is its
// i-th definition. Keys under an unknown table are not reported again. A key
// spelt with other letter case (Prompt, [[Mapping]]) is unknown too: TOML
// keys are case-sensitive, but the decoder reads one regardless of case
// when no key is spelt right.
func (p *parser) unknownKeys(md toml.MetaData) {
	undecoded := map[string]bool{}
	for _, k := range md.Undecoded() {
		undecoded[k.String()] = true
	}
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
		p.addAt(k.String(), p.pos.all().nth(path, seen[path]), "unknown key", hint)
		seen[path]++
	}
	for _, k := range md.Keys() {
		if i, want := miscased(k); i >= 0 {
			if i == len(k)-1 || seen[strings.Join(k[:i+1], ".")] == 0 {
				report(k[:i+1], fmt.Sprintf("keys are case-sensitive: write %q", want))
			}
			continue // reported, or under a miscased table already reported
		}
		if undecoded[k.String()] {
			report(k, hintFor(k))
		}
	}
}

// fields are the keys each table takes, from the raw shapes' tags.
// Built at the first parse: a hook that reads the cache never needs them.
var fields = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"":           tags(reflect.TypeOf(rawFile{})),
		"settings":   tags(reflect.TypeOf(rawSettings{})),
		"mapping":    tags(reflect.TypeOf(rawMapping{})),
		"validators": tags(reflect.TypeOf(rawValidator{})),
		"telemetry":  tags(reflect.TypeOf(rawTelemetry{})),
	}
})

func tags(t reflect.Type) []string {
	var names []string
	for i := range t.NumField() {
		names = append(names, tagName(t.Field(i)))
	}
	return names
}

// tagName is the TOML key a field of a shape decodes.
func tagName(f reflect.StructField) string { return strings.Split(f.Tag.Get("toml"), ",")[0] }

// miscased returns the index of the first part of k that matches a known
// key only when letter case is ignored, and that key; -1 if none does.
func miscased(k toml.Key) (int, string) {
	check := func(i int, table string) (int, string) {
		if i >= len(k) {
			return -1, ""
		}
		for _, f := range fields()[table] {
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
	case "settings", "mapping", "telemetry":
		return check(1, k[0])
	case "validators":
		return check(2, "validators") // k[1] is the validator's name
	}
	return -1, ""
}
