package config

import (
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// positions locates the keys of a config's text, which the library does
// only in a ParseError. Lazy: a config without Problems scans its tables.
type positions struct {
	text   string
	keys   *lines // every definition, once a Problem needs one
	tables *lines // the tables alone, when no Problem did
}

func (ps *positions) all() *lines {
	if ps.keys == nil {
		ps.keys = scanLines(ps.text, func(string) bool { return true })
	}
	return ps.keys
}

func (ps *positions) line(path string) int { return ps.all().line(path) }

// table returns the line of a mapping ("mapping[2]") or validator
// ("validators.v").
func (ps *positions) table(path string) int {
	if ps.keys != nil {
		return ps.keys.line(path)
	}
	if ps.tables == nil {
		ps.tables = scanLines(ps.text, func(table string) bool { return table == "" || table == "validators" })
	}
	return ps.tables.line(path)
}

// TableLines returns the line of each [[name]] header of a TOML text.
func TableLines(text, name string) []int {
	return scanLines(text, func(string) bool { return false }).every[name]
}

// lines maps key paths ("mapping[2].validators") to the lines that
// define them.
type lines struct {
	at     map[string]int   // path → first line that defines it
	every  map[string][]int // unindexed path → every line that defines it, in order
	folded map[string]int   // at in lower case, for a miscased key
}

// scanLines scans text for its table headers, and the keys of the tables
// keysIn accepts.
func scanLines(text string, keysIn func(table string) bool) *lines {
	ls := &lines{at: map[string]int{}, every: map[string][]int{}, folded: map[string]int{}}
	for _, bom := range []string{"\xef\xbb\xbf", "\xff\xfe", "\xfe\xff"} {
		text = strings.TrimPrefix(text, bom)
	}
	table, keys := "", keysIn("")
	counts := map[string]int{}
	inMulti := ""
	n := 0
	for raw := range strings.Lines(text) {
		n++
		line := strings.TrimSpace(raw)
		if inMulti != "" {
			if strings.Count(line, inMulti)%2 == 1 {
				inMulti = ""
			}
			continue
		}
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '[' {
			end := "]" // [table], or [[table]] whose i-th is table[i]
			if strings.HasPrefix(line, "[[") {
				end = "]]"
			}
			table = normKey(strings.TrimSuffix(strings.TrimSpace(cutComment(line)[len(end):]), end))
			if end == "]]" {
				counts[table]++
				table += "[" + strconv.Itoa(counts[table]-1) + "]"
			}
			keys = keysIn(table)
			ls.define(table, n)
			continue
		}
		key, rest, ok := assignment(line)
		if !ok {
			continue
		}
		if keys {
			ls.define(strings.TrimPrefix(table+"."+normKey(key), "."), n)
		}
		inMulti = opensMulti(rest)
	}
	return ls
}

// define records that line n defines path and the tables it implies.
func (ls *lines) define(path string, n int) {
	for i := 0; i < len(path); i++ {
		if path[i] == '.' {
			ls.set(path[:i], n)
		}
	}
	u := ls.set(path, n)
	ls.every[u] = append(ls.every[u], n)
}

// set records line n for path and its unindexed form, where not yet
// defined, and returns the unindexed form.
func (ls *lines) set(path string, n int) string {
	u := unindex(path)
	for _, p := range []string{path, u} {
		if _, ok := ls.at[p]; !ok {
			ls.at[p] = n
		}
		if f := strings.ToLower(p); ls.folded[f] == 0 {
			ls.folded[f] = n
		}
	}
	return u
}

// line returns the line of path, or of its nearest located parent.
func (ls *lines) line(path string) int {
	u := unindex(path)
	for i, p := range []string{path, u, strings.ToLower(path), strings.ToLower(u)} {
		at := ls.at
		if i > 1 {
			at = ls.folded
		}
		for p != "" {
			if n, ok := at[p]; ok {
				return n
			}
			cut := strings.LastIndexAny(p, ".[")
			if cut < 0 {
				break
			}
			p = p[:cut]
		}
	}
	return 0
}

// nth returns the line of the i-th definition of the unindexed path.
func (ls *lines) nth(path string, i int) int {
	if all := ls.every[path]; i < len(all) {
		return all[i]
	}
	return ls.line(path)
}

// assignment splits `key = value` into the key as written and the value.
func assignment(line string) (key, rest string, ok bool) {
	c := line[0]
	if c != '"' && c != '\'' && !isBare(rune(c)) {
		return "", "", false
	}
	if i := unquoted(line, '='); i >= 0 {
		return line[:i], line[i+1:], true
	}
	return "", "", false
}

// unquoted returns the index of the first c in line outside quotes, or -1.
func unquoted(line string, c byte) int {
	inQuote := byte(0)
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case inQuote == '"' && ch == '\\':
			i++ // an escaped character
		case inQuote != 0:
			if ch == inQuote {
				inQuote = 0
			}
		case ch == '"' || ch == '\'':
			inQuote = ch
		case ch == c:
			return i
		}
	}
	return -1
}

// normKey writes a dotted TOML key as the decoder reads it; a key it
// cannot read is kept as written.
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
	if i := unquoted(line, '#'); i >= 0 {
		return strings.TrimSpace(line[:i])
	}
	return line
}

func isBare(r rune) bool {
	return r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

// opensMulti returns the delimiter of a multi-line string v leaves open.
func opensMulti(v string) string {
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '#':
			return ""
		case '"', '\'':
			q := string([]byte{c, c, c})
			if strings.HasPrefix(v[i:], q) {
				end := strings.Index(v[i+3:], q)
				if end < 0 {
					return q
				}
				i += 3 + end + 2
				continue
			}
			for i++; i < len(v) && v[i] != c; i++ {
				if c == '"' && v[i] == '\\' {
					i++
				}
			}
		}
	}
	return ""
}
