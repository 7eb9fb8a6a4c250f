package config

import (
	"strconv"
	"strings"
)

// lines maps TOML key paths to the line that defines them. BurntSushi/toml
// reports positions for syntax errors only, so strict decoding locates
// unknown keys and semantic mistakes with this light scan of the text.
//
// Paths are dotted with array tables indexed: "mapping[2].validators"; the
// unindexed "mapping.validators" names the first occurrence, and nth finds
// the others (the decoder reports keys of array tables unindexed).
type lines struct {
	at    map[string]int   // path → first line that defines it
	every map[string][]int // unindexed path → every line that defines it, in order
}

func scanLines(text string) lines {
	ls := lines{at: map[string]int{}, every: map[string][]int{}}
	table := ""
	counts := map[string]int{}
	inMulti := ""
	for i, raw := range strings.Split(text, "\n") {
		n := i + 1
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
		if strings.HasPrefix(line, "[[") {
			name := joinKey(splitKey(strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(cutComment(line), "[[")), "]]")))
			idx := counts[name]
			counts[name]++
			table = name + "[" + strconv.Itoa(idx) + "]"
			ls.set(table, n)
			ls.set(name, n)
			ls.add(name, n)
			continue
		}
		if line[0] == '[' {
			table = joinKey(splitKey(strings.TrimSuffix(strings.TrimSpace(strings.TrimPrefix(cutComment(line), "[")), "]")))
			ls.setParents(table, n)
			ls.set(table, n)
			ls.add(unindex(table), n)
			continue
		}
		key, rest, ok := keyOf(line)
		if !ok {
			continue
		}
		full := key
		if table != "" {
			full = table + "." + key
		}
		// A dotted key (validators.v.file = …) also defines its tables.
		ls.setParents(full, n)
		ls.set(full, n)
		ls.set(unindex(full), n)
		ls.add(unindex(full), n)
		for _, q := range []string{`"""`, `'''`} {
			if strings.Count(rest, q)%2 == 1 {
				inMulti = q
			}
		}
	}
	return ls
}

func (ls lines) set(path string, n int) {
	if _, ok := ls.at[path]; !ok {
		ls.at[path] = n
	}
}

// setParents sets the tables a dotted path implies, where not yet defined.
func (ls lines) setParents(path string, n int) {
	for i := 0; i < len(path); i++ {
		if path[i] == '.' {
			ls.set(path[:i], n)
			ls.set(unindex(path[:i]), n)
		}
	}
}

func (ls lines) add(path string, n int) { ls.every[path] = append(ls.every[path], n) }

// line returns the line of path, or of its nearest located parent. An
// indexed path never falls back to the first occurrence of its unindexed
// form: "mapping[1].prompt", when absent, is located at its table
// "mapping[1]", not at mapping[0]'s prompt.
func (ls lines) line(path string) int {
	for _, p := range []string{path, unindex(path)} {
		for p != "" {
			if n, ok := ls.at[p]; ok {
				return n
			}
			i := strings.LastIndexAny(p, ".[")
			if i < 0 {
				break
			}
			p = p[:i]
		}
	}
	return 0
}

// nth returns the line of the i-th (0-based) definition of the unindexed
// path, or line(path) when there are not that many.
func (ls lines) nth(path string, i int) int {
	if all := ls.every[path]; i < len(all) {
		return all[i]
	}
	return ls.line(path)
}

// keyOf splits `key = value` into the normalised key and the value text.
func keyOf(line string) (key, rest string, ok bool) {
	c := line[0]
	if c != '"' && c != '\'' && !isBare(rune(c)) {
		return "", "", false
	}
	inQuote := byte(0)
	for i := 0; i < len(line); i++ {
		switch ch := line[i]; {
		case inQuote != 0:
			if ch == inQuote {
				inQuote = 0
			}
		case ch == '"' || ch == '\'':
			inQuote = ch
		case ch == '=':
			return joinKey(splitKey(line[:i])), line[i+1:], true
		}
	}
	return "", "", false
}

// splitKey splits a dotted TOML key into its unquoted parts.
func splitKey(s string) []string {
	var parts []string
	var cur strings.Builder
	inQuote := rune(0)
	for _, r := range s {
		switch {
		case inQuote != 0:
			if r == inQuote {
				inQuote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			inQuote = r
		case r == '.':
			parts = append(parts, strings.TrimSpace(cur.String()))
			cur.Reset()
		case r == ' ' || r == '\t':
		default:
			cur.WriteRune(r)
		}
	}
	return append(parts, strings.TrimSpace(cur.String()))
}

func joinKey(parts []string) string { return strings.Join(parts, ".") }

func unindex(path string) string {
	var b strings.Builder
	skip := false
	for _, r := range path {
		switch {
		case r == '[':
			skip = true
		case r == ']':
			skip = false
		case !skip:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func cutComment(line string) string {
	if i := strings.Index(line, "#"); i >= 0 && !strings.ContainsAny(line[:i], `"'`) {
		return strings.TrimSpace(line[:i])
	}
	return line
}

func isBare(r rune) bool {
	return r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}
