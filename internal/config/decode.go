package config

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/BurntSushi/toml"
)

// node is a key as MetaData names it (arrays unindexed) and as positions does.
type node struct {
	key  toml.Key
	path string // "mapping[1].prompt"
}

func (n node) child(name string) node {
	return node{key: append(slices.Clip(n.key), name), path: strings.TrimPrefix(n.path+"."+name, ".")}
}

// typeCheck returns the first value in file order whose TOML type is not
// its shape's: the library's errors name the key's last definition, in Go.
func (p *parser) typeCheck(text string) (bad *Problem) {
	var tree map[string]any
	if _, err := toml.Decode(text, &tree); err != nil {
		return p.syntaxError(err)
	}
	mismatch := func(n node, v any, want string) {
		if line := p.pos.all().line(n.path); bad == nil || line < bad.Line {
			bad = &Problem{File: p.file, Line: line, Key: n.key.String(),
				Msg: fmt.Sprintf("is %s, want %s", TOMLType(v), want), Hint: typeHint(strings.Join(n.key, "."))}
		}
	}
	var check func(n node, v any, t reflect.Type)
	check = func(n node, v any, t reflect.Type) {
		if t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		m, isTable := v.(map[string]any)
		elems, isArray := Array(v)
		tables := t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Struct
		switch {
		case (t.Kind() == reflect.Struct || t.Kind() == reflect.Map) && !isTable:
			mismatch(n, v, "a table")
		case t.Kind() == reflect.Map:
			for _, k := range slices.Sorted(maps.Keys(m)) {
				check(n.child(k), m[k], t.Elem())
			}
		case t.Kind() == reflect.Struct:
			for _, f := range reflect.VisibleFields(t) {
				if k, fv, ok := field(m, tagName(f)); ok && k != "-" && !f.Anonymous {
					check(n.child(k), fv, f.Type)
				}
			}
		case tables && !isArray:
			mismatch(n, v, "an array of tables")
		case t.Kind() == reflect.Slice && !isArray:
			mismatch(n, v, "an array")
		case tables:
			for i, e := range elems {
				check(node{key: n.key, path: n.path + "[" + strconv.Itoa(i) + "]"}, e, t.Elem())
			}
		case t.Kind() == reflect.Slice:
			if i := slices.IndexFunc(elems, func(e any) bool { return scalar(e, t.Elem()) != "" }); i >= 0 {
				mismatch(n, elems[i], scalar(elems[i], t.Elem())) // at the array's key, as the library names it
			}
		default:
			if want := scalar(v, t); want != "" {
				mismatch(n, v, want)
			}
		}
	}
	check(node{}, tree, reflect.TypeFor[rawFile]())
	return bad
}

// notATable returns a map shape's key defined as a non-table, or nil.
func notATable(md toml.MetaData) toml.Key {
	for _, k := range []toml.Key{{"validators"}, {"telemetry", "resource"}} {
		if t := md.Type(k...); t != "" && t != "Hash" {
			return k
		}
	}
	return nil
}

// tomlTypes names Go types in TOML's words.
var tomlTypes = map[reflect.Type]string{
	reflect.TypeFor[string](): "a string", reflect.TypeFor[bool](): "a boolean", reflect.TypeFor[float64](): "a float",
	reflect.TypeFor[int64](): "an integer", reflect.TypeFor[int](): "an integer", reflect.TypeFor[time.Time](): "a date-time",
	reflect.TypeFor[map[string]any](): "a table", reflect.TypeFor[[]any](): "an array", reflect.TypeFor[[]map[string]any](): "an array",
}

// scalar returns the TOML type Go type t wants when v is not of it, else "".
func scalar(v any, t reflect.Type) string {
	if got := TOMLType(v); got == tomlTypes[t] || got == "an integer" && t.Kind() == reflect.Float64 {
		return ""
	}
	return tomlTypes[t]
}

// field returns the key of m, miscased as the library reads it, of field name.
func field(m map[string]any, name string) (string, any, bool) {
	if v, ok := m[name]; ok {
		return name, v, true
	}
	found := ""
	for k := range m {
		if strings.EqualFold(k, name) && (found == "" || k < found) {
			found = k
		}
	}
	return found, m[found], found != ""
}

// Array returns the elements of a decoded TOML array (testhook's too).
func Array(v any) ([]any, bool) {
	switch a := v.(type) {
	case []any:
		return a, true
	case []map[string]any:
		elems := make([]any, len(a))
		for i, t := range a {
			elems[i] = t
		}
		return elems, true
	}
	return nil, false
}

// TOMLType names in TOML's words the type of a decoded value.
func TOMLType(v any) string {
	if name, ok := tomlTypes[reflect.TypeOf(v)]; ok {
		return name
	}
	return fmt.Sprintf("a %T", v)
}

func mappingPath(i int) string { return "mapping[" + strconv.Itoa(i) + "]" }

// syntaxError turns the decoder's error into a Problem, at SyntaxLine.
func (p *parser) syntaxError(err error) *Problem {
	var pe toml.ParseError
	if !errors.As(err, &pe) {
		// One typeCheck missed (validators and valIdators both).
		msg := strings.TrimPrefix(err.Error(), "toml: ")
		var n int
		_, _ = fmt.Sscanf(msg, "line %d", &n) // 0 when it names no line
		return &Problem{File: p.file, Line: n, Msg: msg}
	}
	n := SyntaxLine(p.pos.text, pe)
	key := pe.LastKey
	if key != "" && !slices.Contains(p.pos.all()[unindex(normKey(key))], n) {
		key = "" // the last key parsed, not the one in error
	}
	return &Problem{File: p.file, Line: n, Key: key, Msg: pe.Message}
}

// SyntaxLine returns the line of a ParseError's mistake, from its offset.
func SyntaxLine(text string, pe toml.ParseError) int {
	if s := pe.Position.Start; s > 0 && s <= len(text) {
		return 1 + strings.Count(text[:s], "\n")
	}
	return pe.Position.Line
}

// typeHint shows how to write the keys most often of the wrong type.
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

// unknownKeys reports each key the decoder did not read, and each miscased one (it reads
// them regardless of case): the i-th of a key at its i-th definition, none under one reported.
func (p *parser) unknownKeys(md toml.MetaData) {
	undecoded := map[string]bool{}
	for _, k := range md.Undecoded() {
		undecoded[k.String()] = true
	}
	seen := map[string]int{}
	var reported []string
	for _, k := range md.Keys() {
		hint := ""
		switch i, want := miscased(k); {
		case i >= 0 && i < len(k)-1 && seen[strings.Join(k[:i+1], ".")] > 0:
			continue // under a miscased table already reported
		case i >= 0:
			k, hint = k[:i+1], fmt.Sprintf("keys are case-sensitive: write %q", want)
		case !undecoded[k.String()]:
			continue
		default:
			hint = hintFor(k)
		}
		path := strings.Join(k, ".")
		if slices.ContainsFunc(reported, func(r string) bool { return strings.HasPrefix(path, r+".") }) {
			continue
		}
		reported = append(reported, path)
		p.addAt(k.String(), p.pos.all().nth(path, seen[path]), "unknown key", hint)
		seen[path]++
	}
}

// fields are the keys each table takes, from the raw shapes' tags.
var fields = sync.OnceValue(func() map[string][]string {
	out := map[string][]string{}
	for table, v := range map[string]any{"": rawFile{}, "settings": rawSettings{}, "mapping": Mapping{},
		"validators": ValidatorKeys{}, "telemetry": TelemetryKeys{}} {
		for _, f := range reflect.VisibleFields(reflect.TypeOf(v)) {
			if name := tagName(f); name != "-" && !f.Anonymous {
				out[table] = append(out[table], name)
			}
		}
	}
	return out
})

// tagName is the TOML key a field of a shape decodes.
func tagName(f reflect.StructField) string { return strings.Split(f.Tag.Get("toml"), ",")[0] }

// fieldPart is which part of a key names a field of its table.
var fieldPart = map[string]int{"": 0, "settings": 1, "mapping": 1, "telemetry": 1, "validators": 2}

// miscased returns the first part of k that is a known key miscased, or -1.
func miscased(k toml.Key) (int, string) {
	for _, table := range []string{"", k[0]} {
		if i, ok := fieldPart[table]; ok && i < len(k) {
			for _, f := range fields()[table] {
				if k[i] != f && strings.EqualFold(k[i], f) {
					return i, f
				}
			}
		}
	}
	return -1, ""
}

// positions locates keys: the library does so only in a ParseError.
type positions struct {
	text string
	keys lines // every definition, scanned at the first use
}

func (ps *positions) all() lines {
	if ps.keys == nil {
		ps.keys = scanLines(ps.text, true)
	}
	return ps.keys
}

// TableLines returns the line of each [[name]] header of a TOML text.
func TableLines(text, name string) []int {
	return scanLines(text, false)[name]
}

// lines maps a key path to its lines: as written ("mapping[2].x"), unindexed, both folded after "\x00".
type lines map[string][]int

// scanLines finds the table headers, and with keys every key.
func scanLines(text string, keys bool) lines {
	ls := lines{}
	for _, bom := range []string{"\xef\xbb\xbf", "\xff\xfe", "\xfe\xff"} {
		text = strings.TrimPrefix(text, bom)
	}
	table, inMulti := "", ""
	counts := map[string]int{}
	n := 0
	for raw := range strings.Lines(text) {
		n++
		line := strings.TrimSpace(raw)
		switch {
		case inMulti != "":
			if strings.Count(line, inMulti)%2 == 1 {
				inMulti = ""
			}
		case line == "" || line[0] == '#':
		case line[0] == '[':
			end := "]" // [table], or [[table]] whose i-th is table[i]
			if strings.HasPrefix(line, "[[") {
				end = "]]"
			}
			table = normKey(strings.TrimSuffix(strings.TrimSpace(cutComment(line)[len(end):]), end))
			if end == "]]" {
				counts[table]++
				table += "[" + strconv.Itoa(counts[table]-1) + "]"
			}
			ls.define(table, n)
		default:
			if key, rest, ok := assignment(line); ok {
				if keys {
					ls.define(strings.TrimPrefix(table+"."+normKey(key), "."), n)
				}
				_, inMulti = scan(rest, 0)
			}
		}
	}
	return ls
}

// define records that line n defines path, and the tables it implies.
func (ls lines) define(path string, n int) {
	for i := range len(path) {
		if path[i] == '.' {
			ls.add(path[:i], n, false)
		}
	}
	ls.add(path, n, true)
}

func (ls lines) add(path string, n int, every bool) {
	u := unindex(path)
	for _, p := range slices.Compact([]string{path, u, "\x00" + strings.ToLower(path), "\x00" + strings.ToLower(u)}) {
		if every || len(ls[p]) == 0 {
			ls[p] = append(ls[p], n)
		}
	}
}

// line returns the first line of path, or of its nearest located parent.
func (ls lines) line(path string) int {
	for _, p := range []string{path, unindex(path), "\x00" + strings.ToLower(path), "\x00" + strings.ToLower(unindex(path))} {
		for ; p != ""; p = p[:max(0, strings.LastIndexAny(p, ".["))] {
			if n := ls[p]; len(n) > 0 {
				return n[0]
			}
		}
	}
	return 0
}

// nth returns the line of the i-th definition of the unindexed path.
func (ls lines) nth(path string, i int) int {
	if all := ls[path]; i < len(all) {
		return all[i]
	}
	return ls.line(path)
}

// assignment splits `key = value` into the key as written and the value.
func assignment(line string) (key, rest string, ok bool) {
	c := line[0]
	bare := c == '_' || c == '-' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
	if i, _ := scan(line, '='); i >= 0 && (bare || c == '"' || c == '\'') {
		return line[:i], line[i+1:], true
	}
	return "", "", false
}

// scan returns the index of the first stop outside quotes and comments, or
// -1 and the delimiter of the multi-line string line leaves open.
func scan(line string, stop byte) (int, string) {
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == stop:
			return i, ""
		case c == '#':
			return -1, ""
		case c == '"' || c == '\'':
			q := strings.Repeat(string(c), 3)
			if strings.HasPrefix(line[i:], q) {
				end := strings.Index(line[i+3:], q)
				if end < 0 {
					return -1, q
				}
				i += 3 + end + 2
				continue
			}
			for i++; i < len(line) && line[i] != c; i++ {
				if c == '"' && line[i] == '\\' {
					i++ // an escaped character
				}
			}
		}
	}
	return -1, ""
}

// normKey writes a dotted TOML key as the decoder reads it, if it can.
func normKey(key string) string {
	key = strings.TrimSpace(key)
	if !strings.ContainsAny(key, "\"' \t") {
		return key
	}
	md, err := toml.Decode(key+" = 0", &struct{}{})
	if keys := md.Keys(); err == nil && len(keys) > 0 {
		return strings.Join(keys[len(keys)-1], ".")
	}
	return key
}

// unindex drops a path's indexes: "mapping[2].prompt" is "mapping.prompt".
func unindex(path string) string {
	before, after, found := strings.Cut(path, "[")
	before = strings.ReplaceAll(before, "]", "")
	if !found {
		return before
	}
	_, after, _ = strings.Cut(after, "]")
	return before + unindex(after)
}

// cutComment removes a comment from a line, minding quoted "#".
func cutComment(line string) string {
	if i, _ := scan(line, '#'); i >= 0 {
		return strings.TrimSpace(line[:i])
	}
	return line
}
