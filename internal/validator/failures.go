package validator

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"regexp"
	"strings"
)

// Output policies ([settings] output): what is kept of a check's output
// past its byte limit, and what a reader is shown of output too long to
// show whole.
const (
	OutputFailures = "failures" // the tail and failing lines; failing tests first
	OutputHead     = "head"     // the first bytes; the first lines
)

// Shown is what a reader (the agent in a block, a person under `gate run`)
// is shown of the output: at most n lines and a note of what was left out.
// Output that fits is shown whole, as written. With OutputFailures, output
// that does not fit shows the failing tests of a format failureBlocks
// recognises, each cut to its share of n, then the output's last lines,
// where runners put their summary; output in which no failure is found is
// shown from its start, as Lines shows it, as is all output with another
// policy.
func (r Result) Shown(n int, policy string) []string {
	lines := r.lines()
	if policy != OutputFailures || len(lines) <= n && r.Dropped == 0 {
		return r.Lines(n)
	}
	blocks, tail := failureBlocks(lines)
	if len(blocks) == 0 {
		return r.Lines(n)
	}
	var shown []string
	// The blocks share three quarters of the room; the tail has the rest.
	from, share := len(lines), max(n*3/4/len(blocks), 3)
	for _, b := range blocks {
		if len(shown) >= n {
			break
		}
		shown = append(shown, b.lines[:min(len(b.lines), share, n-len(shown))]...)
		from = b.end
	}
	if !tail {
		from = len(lines)
	}
	// The tail never repeats a block's lines; more counts the lines of
	// the output not shown.
	from = max(from, len(lines)-(n-len(shown)))
	more := max(from-len(shown), 0)
	return append(append(shown, lines[from:]...), note(more, r.Dropped)...)
}

// block is one failing test's lines; end is the index in the output after
// its last line, 0 for a block made from structured output.
type block struct {
	lines []string
	end   int
}

// failureBlocks finds the failing tests in output lines: go test -json's
// events, JUnit XML's test cases, or the blocks of the first text format
// in formats that has any. tail says whether the output's last lines are
// worth showing after them (a summary, not JSON or XML).
func failureBlocks(lines []string) (blocks []block, tail bool) {
	plain := make([]string, len(lines))
	for i, l := range lines {
		plain[i] = sgr.ReplaceAllString(l, "")
	}
	if b := goJSONFailures(plain); len(b) > 0 {
		return b, false
	}
	if b := junitFailures(strings.Join(plain, "\n")); len(b) > 0 {
		return b, false
	}
	if b := goFailures(plain); len(b) > 0 {
		return b, true
	}
	for _, f := range formats {
		if b := f.blocks(plain); len(b) > 0 {
			return b, true
		}
	}
	return nil, false
}

// sgr matches the colour codes runners write when they think they are on
// a terminal.
var sgr = regexp.MustCompile("\x1b\\[[0-9;]*m")

// format is a runner's text output: a failing test's block is a line
// start accepts and those after it up to one ends takes as the next
// section's; keep, when set, picks the block's lines worth showing.
type format struct {
	start func(trim string) bool
	ends  func(line string) bool
	keep  func(line string) bool
}

// formats are tried in order; the first with a failing block wins.
var formats = []format{
	{start: func(t string) bool { // TAP: a failed test and its YAML block
		u := strings.ToUpper(t)
		return strings.HasPrefix(t, "not ok") && !strings.Contains(u, "# TODO") && !strings.Contains(u, "# SKIP")
	}},
	{start: pytestHeader.MatchString, // pytest's FAILURES and ERRORS: the lines >, E and where, not the code
		ends: func(l string) bool { return pytestHeader.MatchString(l) || strings.HasPrefix(l, "====") },
		keep: func(l string) bool { return indent(l) == 0 }},
	{start: func(t string) bool { return strings.HasPrefix(t, "FAIL ") && strings.Contains(t, " > ") }, // vitest
		ends: func(l string) bool { return strings.HasPrefix(l, "⎯") }},
	{start: func(t string) bool { return strings.HasPrefix(t, "● ") && !strings.HasPrefix(t, "● Console") }}, // jest
	{start: func(t string) bool { return failingLine([]byte(t)) }},                                           // any other: lines that read as failing
}

var pytestHeader = regexp.MustCompile(`^_{3,} .+ _{3,}$`)

func prefixed(prefixes ...string) func(string) bool {
	return func(t string) bool {
		for _, p := range prefixes {
			if strings.HasPrefix(t, p) {
				return true
			}
		}
		return false
	}
}

// blocks are f's failing blocks in lines, each once: jest repeats them in
// its summary of a run of several files.
func (f format) blocks(lines []string) []block {
	var out []block
	seen := map[string]bool{}
	for i := 0; i < len(lines); i++ {
		if !f.start(strings.TrimSpace(lines[i])) {
			continue
		}
		b, ind := block{lines: []string{lines[i]}}, indent(lines[i])
		j := i + 1
		for ; j < len(lines) && !f.ended(lines[j], ind); j++ {
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

// ended says whether line ends a block begun at indentation ind: by f's
// rule, else at the first line not blank and indented no deeper.
func (f format) ended(line string, ind int) bool {
	if f.ends != nil {
		return f.ends(line)
	}
	return strings.TrimSpace(line) != "" && indent(line) <= ind
}

// noise is a line of a block not worth its room: blank, or TAP's YAML
// markers and node's timing and classes of failure.
func noise(trim string) bool {
	return trim == "" || trim == "---" || trim == "..." || prefixed("duration_ms:", "failureType:", "code: 'ERR_")(trim)
}

// indent is the width of a line's leading blanks.
func indent[T string | []byte](line T) int {
	i := 0
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	return i
}

// failingLine is whether a line of unknown output reads as a failure, in
// the spellings of the usual runners, compilers and shells. capped asks
// it of every line a huge output lets go: lines without a colon are
// passed over after the prefixes.
func failingLine(line []byte) bool {
	t := line[indent(line):]
	for _, p := range failPrefixes {
		if bytes.HasPrefix(t, []byte(p)) {
			return true
		}
	}
	if bytes.IndexByte(line, ':') < 0 {
		return false
	}
	for _, s := range failInfixes {
		if bytes.Contains(line, []byte(s)) {
			return true
		}
	}
	return false
}

var (
	failPrefixes = []string{"not ok", "--- FAIL", "FAIL", "●", "✕", "✗", "✘", "×", "E ", "panic:", "Error", "error", "ERROR", "Traceback", "AssertionError", "<failure", "<error", "npm ERR!"}
	// The infixes, each with a colon, find go test -json's failing
	// events and the test output they follow (its messages are
	// indented), and compilers' errors.
	failInfixes = []string{`"Action":"fail"`, `"Action":"build-`, `"Output":"--- FAIL`, `"Output":"    `, `"Output":"panic:`, ": error", "Error:"}
)

// goFailures are go test's failing tests, each its "--- FAIL" line then
// its messages: with -v, those between its "=== RUN" and it; without,
// those after it indented deeper. A panic is a block of its own.
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

// testEvent is a line of go test -json (cmd/test2json).
type testEvent struct {
	Action, Package, Test, ImportPath, Output string
}

// goJSONFailures are the failing tests and builds of go test -json output,
// each its "--- FAIL" line then the test's output.
func goJSONFailures(lines []string) []block {
	var out []block
	said := map[string][]string{}
	for _, l := range lines {
		var e testEvent
		if !strings.HasPrefix(l, "{") || json.Unmarshal([]byte(l), &e) != nil {
			continue
		}
		key := e.ImportPath + "\x00" + e.Package + "\x00" + e.Test
		switch s := strings.TrimRight(e.Output, "\n"); {
		case (e.Action == "output" || e.Action == "build-output") && !strings.HasPrefix(s, "=== "):
			said[key] = append(said[key], s)
		case e.Action == "fail" && e.Test != "", e.Action == "build-fail":
			b := said[key]
			for i, s := range b {
				if strings.HasPrefix(s, "--- FAIL") {
					b = append(append([]string{s}, b[:i]...), b[i+1:]...)
					break
				}
			}
			out = append(out, block{lines: b})
		}
	}
	return out
}

// junitCase is a JUnit XML <testcase>.
type junitCase struct {
	Name      string      `xml:"name,attr"`
	Classname string      `xml:"classname,attr"`
	Failures  []junitFail `xml:"failure"`
	Errors    []junitFail `xml:"error"`
}

type junitFail struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// junitFailures are the failed and erroring test cases of JUnit XML, each
// its class and name then its message or text.
func junitFailures(out string) []block {
	if !strings.Contains(out, "<testsuite") && !strings.Contains(out, "<testcase") {
		return nil
	}
	var blocks []block
	dec := xml.NewDecoder(strings.NewReader(out))
	dec.Strict = false
	for {
		tok, err := dec.Token()
		if err != nil {
			return blocks
		}
		var c junitCase
		if se, ok := tok.(xml.StartElement); !ok || se.Name.Local != "testcase" || dec.DecodeElement(&c, &se) != nil {
			continue
		}
		for _, f := range append(c.Failures, c.Errors...) {
			b := block{lines: []string{"FAIL " + strings.TrimPrefix(c.Classname+" > "+c.Name, " > ")}}
			text := strings.TrimSpace(f.Text)
			if text == "" {
				text = f.Message
			}
			for l := range strings.Lines(text) {
				if t := strings.TrimSpace(l); !noise(t) {
					b.lines = append(b.lines, "  "+t)
				}
			}
			blocks = append(blocks, b)
		}
	}
}
