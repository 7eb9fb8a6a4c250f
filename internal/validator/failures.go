package validator

import (
	"bytes"
	"cmp"
	"encoding/json"
	"encoding/xml"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Output policies ([settings] output, docs/validator-output.md).
const (
	OutputFailures = "failures" // the tail and failing lines; failing tests first
	OutputHead     = "head"     // the first bytes; the first lines
)

// Shown is at most n lines of the output under policy, and a note of what was left out.
func (r Result) Shown(n int, policy string) []string {
	out := strings.TrimRight(r.Output, "\n")
	lines := strings.Split(out, "\n")
	if out == "" {
		lines = nil
	}
	var blocks []block
	if policy == OutputFailures && (len(lines) > n || r.Dropped > 0) {
		blocks = failureBlocks(lines)
	}
	if len(blocks) == 0 {
		n = min(n, len(lines))
		return append(lines[:n:n], note(len(lines)-n, r.Dropped)...)
	}
	var shown []string
	from, share := len(lines), max(n*3/4/len(blocks), 3)
	for _, b := range blocks {
		if len(shown) >= n {
			break
		}
		shown = append(shown, b.lines[:min(len(b.lines), share, n-len(shown))]...)
		from = b.end
	}
	from = max(from, len(lines)-(n-len(shown)))
	more := max(from-len(shown), 0)
	return append(append(shown, lines[from:]...), note(more, r.Dropped)...)
}

// block is one failing test's lines; end is the index after its last (all: structured, nothing after worth showing).
type block struct {
	lines []string
	end   int
}

// failureBlocks finds the failing tests in lines: go test -json, JUnit XML, go test, or the first of formats with any.
func failureBlocks(lines []string) []block {
	plain := strings.Split(sgr().ReplaceAllString(strings.Join(lines, "\n"), ""), "\n")
	finders := []func([]string) []block{goJSONFailures, junitFailures, goFailures}
	for _, f := range formats {
		finders = append(finders, f.blocks)
	}
	for _, find := range finders {
		if b := find(plain); len(b) > 0 {
			return b
		}
	}
	return nil
}

// sgr matches colour codes.
var sgr = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile("\x1b\\[[0-9;]*m") })

// format is a runner's output: a block runs from a line start accepts to one ends takes (nil: the next not deeper), keeping keep's.
type format struct {
	start func(trim string) bool
	ends  func(line string) bool
	keep  func(line string) bool
}

var formats = []format{
	{start: func(t string) bool { // TAP: a failed test and its YAML block
		u := strings.ToUpper(t)
		return strings.HasPrefix(t, "not ok") && !strings.Contains(u, "# TODO") && !strings.Contains(u, "# SKIP")
	}},
	{start: func(l string) bool { return pytestHeader().MatchString(l) }, // pytest's FAILURES and ERRORS: the lines >, E and where, not the code
		ends: func(l string) bool { return pytestHeader().MatchString(l) || strings.HasPrefix(l, "====") },
		keep: func(l string) bool { return indent(l) == 0 }},
	{start: func(t string) bool { return strings.HasPrefix(t, "FAIL ") && strings.Contains(t, " > ") }, // vitest
		ends: func(l string) bool { return strings.HasPrefix(l, "⎯") }},
	{start: func(t string) bool { return strings.HasPrefix(t, "● ") && !strings.HasPrefix(t, "● Console") }}, // jest
	{start: func(t string) bool { return failingLine([]byte(t)) }},                                           // any other: lines that read as failing
}

var pytestHeader = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^_{3,} .+ _{3,}$`) })

func prefixed(prefixes ...string) func(string) bool {
	return func(t string) bool {
		return slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(t, p) })
	}
}

// blocks are f's failing blocks in lines, each once (jest repeats them).
func (f format) blocks(lines []string) []block {
	var out []block
	seen := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		if !f.start(strings.TrimSpace(lines[i])) {
			continue
		}
		b, ind := block{lines: []string{lines[i]}}, indent(lines[i])
		ends := f.ends
		if ends == nil {
			ends = func(l string) bool { return strings.TrimSpace(l) != "" && indent(l) <= ind }
		}
		j := i + 1
		for ; j < len(lines) && !ends(lines[j]); j++ {
			if !noise(strings.TrimSpace(lines[j])) && (f.keep == nil || f.keep(lines[j])) {
				b.lines = append(b.lines, lines[j])
			}
		}
		b.end, i = j, j-1
		if key := strings.Join(b.lines, "\n"); !seen[key] {
			out = append(out, b)
			seen[key] = true
		}
	}
	return out
}

// noise is a block's line not worth its room: blank, TAP's YAML markers, node's timing.
func noise(trim string) bool {
	return trim == "" || trim == "---" || trim == "..." || prefixed("duration_ms:", "failureType:", "code: 'ERR_")(trim)
}

func indent[T string | []byte](line T) int {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return i
}

// failingLine is whether a line of unknown output reads as a failure (infixes need a colon).
func failingLine(line []byte) bool {
	t := line[indent(line):]
	return slices.ContainsFunc(failPrefixes, func(p string) bool { return bytes.HasPrefix(t, []byte(p)) }) ||
		bytes.IndexByte(line, ':') >= 0 && slices.ContainsFunc(failInfixes, func(s string) bool { return bytes.Contains(line, []byte(s)) })
}

var (
	failPrefixes = []string{"not ok", "--- FAIL", "FAIL", "●", "✕", "✗", "✘", "×", "E ", "panic:", "Error", "error", "ERROR", "Traceback", "AssertionError", "<failure", "<error", "npm ERR!"}
	failInfixes  = []string{`"Action":"fail"`, `"Action":"build-`, `"Output":"--- FAIL`, `"Output":"    `, `"Output":"panic:`, ": error", "Error:"}
)

// goFailures are go test's failing tests: "--- FAIL", its messages (-v: since "=== RUN", else deeper after); a panic alone.
func goFailures(lines []string) []block {
	var out []block
	said := map[string][]string{}
	test, in := "", -1 // the test running (-v); the block taking messages
	for i, l := range lines {
		t := strings.TrimSpace(l)
		f := strings.Fields(t)
		switch {
		case len(f) == 3 && prefixed("=== RUN", "=== CONT", "=== NAME")(t):
			test, in = f[2], -1
		case strings.HasPrefix(t, "panic:"):
			out, in = append(out, block{lines: []string{l}, end: i + 1}), -1
		case len(f) >= 3 && f[0] == "---":
			test, in = "", -1
			if f[1] == "FAIL:" {
				out, in = append(out, block{lines: append([]string{l}, said[f[2]]...), end: i + 1}), len(out)
			}
		case in >= 0 && indent(l) > indent(out[in].lines[0]):
			out[in].lines, out[in].end = append(out[in].lines, l), i+1
		case test != "" && indent(l) > 0:
			said[test] = append(said[test], l)
		}
	}
	return out
}

// goJSONFailures are go test -json's failing tests and builds, "--- FAIL" first.
func goJSONFailures(lines []string) []block {
	var out []block
	said := map[string][]string{}
	for _, l := range lines {
		var e struct{ Action, Package, Test, ImportPath, Output string }
		if !strings.HasPrefix(l, "{") || json.Unmarshal([]byte(l), &e) != nil {
			continue
		}
		key := e.ImportPath + "\x00" + e.Package + "\x00" + e.Test
		switch s := strings.TrimRight(e.Output, "\n"); {
		case (e.Action == "output" || e.Action == "build-output") && !strings.HasPrefix(s, "=== "):
			said[key] = append(said[key], s)
		case e.Action == "fail" && e.Test != "", e.Action == "build-fail":
			b := said[key]
			if i := slices.IndexFunc(b, prefixed("--- FAIL")); i >= 0 {
				b = append(append([]string{b[i]}, b[:i]...), b[i+1:]...)
			}
			out = append(out, block{lines: b, end: len(lines)})
		}
	}
	return out
}

type junitFail struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// junitFailures are JUnit XML's failed and erroring test cases.
func junitFailures(lines []string) []block {
	var blocks []block
	dec := xml.NewDecoder(strings.NewReader(strings.Join(lines, "\n")))
	dec.Strict = false
	for {
		tok, err := dec.Token()
		if err != nil {
			return blocks
		}
		var c struct {
			Name      string      `xml:"name,attr"`
			Classname string      `xml:"classname,attr"`
			Failures  []junitFail `xml:"failure"`
			Errors    []junitFail `xml:"error"`
		}
		if se, ok := tok.(xml.StartElement); !ok || se.Name.Local != "testcase" || dec.DecodeElement(&c, &se) != nil {
			continue
		}
		for _, f := range append(c.Failures, c.Errors...) {
			b := block{lines: []string{"FAIL " + strings.TrimPrefix(c.Classname+" > "+c.Name, " > ")}, end: len(lines)}
			for l := range strings.Lines(cmp.Or(strings.TrimSpace(f.Text), f.Message)) {
				if t := strings.TrimSpace(l); !noise(t) {
					b.lines = append(b.lines, "  "+t)
				}
			}
			blocks = append(blocks, b)
		}
	}
}
