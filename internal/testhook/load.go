package testhook

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/validator"
)

// The default tests files, relative to the project root, in the order tried.
const (
	DefaultFile     = "tests/functional/tests.toml"
	DefaultJSONFile = "tests/functional/tests.json"
)

// testsFile returns the tests file named (see path), else the first default that exists.
func (r *runner) testsFile(name string) (string, error) {
	if name != "" {
		return r.path(name), nil
	}
	for _, f := range []string{DefaultFile, DefaultJSONFile} {
		if _, err := os.Stat(r.rootPath(f)); err == nil {
			return r.rootPath(f), nil
		}
	}
	return "", fmt.Errorf("no tests file: neither %s nor %s exists", DefaultFile, DefaultJSONFile)
}

// Load reads and checks the tests file at path, shown relative to root; every mistake is a config.Problem.
func Load(path, root string) (*Suite, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, path, root)
}

// Parse is Load on the file's contents: JSON if named .json, or not .toml and starting with "{"; else TOML.
func Parse(data []byte, path, root string) (*Suite, error) {
	file := project.Display(root, path)
	var s *Suite
	var ps config.Problems
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".json" || ext != ".toml" && bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		s, ps = parseJSON(data, file)
	} else {
		s, ps = parseTOML(string(data), file)
	}
	if len(ps) > 0 {
		// In file order, as a person fixes them; the file's own first.
		slices.SortStableFunc(ps, func(a, b *config.Problem) int { return cmp.Compare(a.Line, b.Line) })
		return nil, ps
	}
	return s, nil
}

func parseJSON(data []byte, file string) (*Suite, config.Problems) {
	l := &loader[json.RawMessage]{format: jsonFormat, file: file, decode: decodeJSON}
	dec := json.NewDecoder(bytes.NewReader(data))
	var top map[string]json.RawMessage
	err := dec.Decode(&top)
	isType := errors.As(err, new(*json.UnmarshalTypeError))
	switch se, isSyntax := errors.AsType[*json.SyntaxError](err); {
	case isSyntax:
		l.add(lineAt(data, int(se.Offset)), "", "not valid JSON: "+err.Error(), "")
	case err != nil && !isType:
		l.add(0, "", "not valid JSON: "+err.Error(), "")
	case dec.More():
		l.add(lineAt(data, int(dec.InputOffset())), "", "not valid JSON: more than one value", "")
	case isType || top == nil:
		l.add(1, "", "must be a JSON object, not "+l.typeOf(bytes.TrimSpace(data)), `{"version": "1", "tests": [{"id": …, "action": …, "expect": […]}]}`)
	default:
		l.lines = jsonLines(data, top["tests"])
		return l.suite(top), l.problems
	}
	return nil, l.problems
}

// decodeJSON decodes a JSON value as the libraries do TOML's: numbers as written.
func decodeJSON(r json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(r))
	dec.UseNumber()
	return dec.Decode(v)
}

func parseTOML(text, file string) (*Suite, config.Problems) {
	var top map[string]toml.Primitive
	md, err := toml.Decode(text, &top)
	l := &loader[toml.Primitive]{format: tomlFormat, file: file, decode: md.PrimitiveDecode}
	if pe, ok := errors.AsType[toml.ParseError](err); ok {
		l.add(config.SyntaxLine(text, pe), "", pe.Message, "")
	} else if err != nil {
		l.add(0, "", strings.TrimPrefix(err.Error(), "toml: "), "")
	} else {
		l.lines = config.TableLines(text, "test")
		return l.suite(top), l.problems
	}
	return nil, l.problems
}

// loader checks a tests file key by key, each value typed by its form's library
// (R is a value it has not decoded yet): a person sees every mistake at once.
type loader[R any] struct {
	format
	file     string
	lines    []int // line of each test, by index; shorter when unknown
	decode   func(R, any) error
	problems config.Problems
}

// format is how a tests file's form is spoken of in its problems.
type format struct {
	name     string // "JSON" or "TOML"
	testsKey string // "tests" in JSON, "test" ([[test]] tables) in TOML
	kind     string // what a test is: "object" or "table"
	aKind    string // with its article
	example  string // how the tests are written
	typeName func(any) string
}

var (
	tomlFormat = format{"TOML", "test", "table", "a table", "[[test]] tables with id = …, action = …", config.TOMLType}
	jsonFormat = format{"JSON", "tests", "object", "an object", `"tests": [{"id": …, "action": …}, …]`, jsonType}
)

// add records a problem in the test key names, or in the file when key is "".
func (l *loader[R]) add(line int, key, msg, hint string) {
	l.problems = append(l.problems, &config.Problem{File: l.file, Line: line, Key: key, Msg: msg, Hint: hint})
}

// typeOf names, in the file's words, the type of r.
func (l *loader[R]) typeOf(r R) string {
	var v any
	_ = l.decode(r, &v) // any takes every value
	return l.typeName(v)
}

// into decodes m[key], if present, into v; a value v cannot take is a problem (false): key must be want.
func (l *loader[R]) into(line int, name string, m map[string]R, key, want, hint string, v any) bool {
	if r, present := m[key]; present && (l.decode(r, v) != nil || !l.fits(r, reflect.TypeOf(v).Elem())) {
		l.add(line, name, fmt.Sprintf("%s must be %s, not %s", key, want, l.typeOf(r)), hint)
		return false
	}
	return true
}

// fits reports whether r has t's shape, as the libraries do not check: TOML decodes a string into a map as an empty
// one, JSON a null in a list of strings as "". A null is as absent.
func (l *loader[R]) fits(r R, t reflect.Type) bool {
	if t.Kind() != reflect.Map && t.Kind() != reflect.Slice {
		return true // the decode's own error said it
	}
	var raw any
	_ = l.decode(r, &raw)
	v := reflect.ValueOf(raw)
	switch {
	case raw == nil:
		return true
	case v.Kind() != t.Kind():
		return false
	case t.Elem().Kind() == reflect.String:
		for _, e := range v.Seq2() {
			if _, ok := e.Interface().(string); !ok {
				return false
			}
		}
	}
	return true
}

// text decodes r, a string (a JSON null is not one).
func (l *loader[R]) text(r R) (string, bool) {
	var s *string
	if l.decode(r, &s) != nil || s == nil {
		return "", false
	}
	return *s, true
}

func (l *loader[R]) suite(top map[string]R) *Suite {
	s := &Suite{File: l.file}
	var list []R
	typed := true
	for _, k := range slices.Sorted(maps.Keys(top)) {
		switch k {
		case "version":
			var v any
			switch _ = l.decode(top[k], &v); v.(type) {
			case string, json.Number, int64, float64:
				s.Version = fmt.Sprint(v)
			default:
				l.add(0, "", "version must be a string or a number, not "+l.typeName(v), "")
			}
		case "description":
			s.Description = l.str(0, "", top, k, false, "")
		case l.testsKey:
			typed = l.into(0, "", top, k, fmt.Sprintf("a list of test %ss", l.kind), "write them as "+l.example, &list)
		case "tests", "test":
			l.add(0, "", fmt.Sprintf("unknown key %q", k), fmt.Sprintf("in a %s file the tests are %s", l.name, l.example))
		default:
			l.add(0, "", fmt.Sprintf("unknown key %q", k), "known keys: version, description, "+l.testsKey)
		}
	}
	if typed && len(list) == 0 {
		l.add(0, "", "has no tests", "write them as "+l.example)
	}
	first := map[string]string{} // where each id is first used
	for i, r := range list {
		t, ok := l.test(i, r)
		if !ok {
			continue
		}
		if where, dup := first[t.ID]; dup {
			l.add(t.Line, testKey(t.ID), fmt.Sprintf("duplicate id (first used by %s)", where), "every test needs its own id")
			continue
		}
		first[t.ID] = fmt.Sprintf("test #%d", i+1)
		if t.Line > 0 {
			first[t.ID] += fmt.Sprintf(", line %d", t.Line)
		}
		s.Tests = append(s.Tests, t)
	}
	l.checkRefs(s.Tests)
	return s
}

// Known test keys, in the order they are checked and listed in hints.
var testKeys = []string{"id", "description", "category", "action", "expect", "save", "tags"}

// test checks and converts one test. ok is false when it has no usable id.
func (l *loader[R]) test(i int, r R) (t Test, ok bool) {
	if i < len(l.lines) {
		t.Line = l.lines[i]
	}
	name := fmt.Sprintf("test #%d", i+1)
	var m map[string]R
	if err := l.decode(r, &m); err != nil || m == nil {
		l.add(t.Line, name, fmt.Sprintf("must be %s, not %s", l.aKind, l.typeOf(r)), "")
		return t, false
	}
	switch id := l.str(t.Line, name, m, "id", true, "every test needs a unique id"); {
	case strings.TrimSpace(id) == "": // str said why
	case strings.ContainsAny(id, "\r\n"):
		l.add(t.Line, name, "id has a line break", "")
	default:
		t.ID, name = id, testKey(id)
	}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if !slices.Contains(testKeys, k) {
			l.add(t.Line, name, fmt.Sprintf("unknown key %q", k), "known keys: "+strings.Join(testKeys, ", "))
		}
	}
	t.Description = l.str(t.Line, name, m, "description", false, "")
	t.Category = cmp.Or(l.str(t.Line, name, m, "category", false, ""), DefaultCategory)
	t.Action = l.str(t.Line, name, m, "action", true, "")
	var expect []R
	var save map[string]R
	l.into(t.Line, name, m, "expect", "a list", `expect: [{"contains": "…"}, {"regex": "…"}]`, &expect)
	t.Expect = l.expects(t.Line, name, expect)
	l.into(t.Line, name, m, "save", "a map of variable to regex", `save: {"token": "token: (\\w+)"}`, &save)
	t.Save = l.saves(t.Line, name, save)
	l.into(t.Line, name, m, "tags", "a list of strings", "", &t.Tags)
	return t, t.ID != ""
}

// str returns m[key], a string; if required, present and not blank, or a problem with hint says so.
func (l *loader[R]) str(line int, name string, m map[string]R, key string, required bool, hint string) string {
	r, present := m[key]
	s, isStr := l.text(r)
	switch {
	case !present && required:
		l.add(line, name, "missing "+key, hint)
	case present && !isStr:
		l.add(line, name, fmt.Sprintf("%s must be a string, not %s", key, l.typeOf(r)), "")
	case required && strings.TrimSpace(s) == "":
		l.add(line, name, key+" is empty", hint)
	}
	return s
}

func (l *loader[R]) expects(line int, name string, list []R) []validator.Expectation {
	var out []validator.Expectation
	for j, r := range list {
		where := fmt.Sprintf("expect[%d]", j)
		var m map[string]R
		if l.decode(r, &m) != nil || len(m) != 1 {
			l.add(line, name, where+" must have exactly one of contains, not_contains or regex", `e.g. {"contains": "hello"}`)
			continue
		}
		for k, pr := range m {
			kind := validator.Kind(k)
			p, isStr := l.text(pr)
			_, err := validator.NewExpectation(kind, blankRefs(p)) // each ${var} a literal, as at run time
			switch {
			case kind != validator.Contains && kind != validator.NotContains && kind != validator.Regex:
				l.add(line, name, fmt.Sprintf("%s: unknown expectation %q", where, k), "use contains, not_contains or regex")
			case !isStr:
				l.add(line, name, fmt.Sprintf("%s: %s must be a string, not %s", where, k, l.typeOf(pr)), "")
			case err != nil:
				l.add(line, name, fmt.Sprintf("%s: regex %q does not compile: %s", where, p, reErr(err)), "the syntax is Go's RE2")
			default:
				out = append(out, validator.Expectation{Kind: kind, Pattern: p})
			}
		}
	}
	return out
}

func (l *loader[R]) saves(line int, name string, m map[string]R) []Save {
	var out []Save
	for _, k := range slices.Sorted(maps.Keys(m)) {
		p, isStr := l.text(m[k])
		re, err := regexp.Compile(blankRefs(p))
		switch {
		case !validName(k):
			l.add(line, name, fmt.Sprintf("save: %q is not a variable name", k), "letters, digits and _, not starting with a digit")
		case !isStr:
			l.add(line, name, fmt.Sprintf("save.%s must be a regex string, not %s", k, l.typeOf(m[k])), "")
		case err != nil:
			l.add(line, name, fmt.Sprintf("save.%s: regex %q does not compile: %s", k, p, reErr(err)), "the syntax is Go's RE2")
		case re.NumSubexp() < 1:
			l.add(line, name, fmt.Sprintf("save.%s: regex %q has no group", k, p), "the value saved is group 1: wrap it in (…)")
		default:
			out = append(out, Save{Var: k, Regex: p})
		}
	}
	return out
}

// checkRefs rejects a ${var} that no earlier test saves.
func (l *loader[R]) checkRefs(tests []Test) {
	unsaved(tests, func(i int, n string) {
		hint := "a test before this one must save it: save = {" + n + " = \"regex with (group)\"}"
		switch j := saverOf(tests[i:], n); {
		case j == 0:
			hint = "a test cannot use what it saves itself; use it in a later test"
		case j > 0:
			hint = fmt.Sprintf("test %q saves it, but runs later: move that test before this one", tests[i+j].ID)
		}
		l.add(tests[i].Line, testKey(tests[i].ID), fmt.Sprintf("uses ${%s}, which no earlier test saves", n), hint)
	})
}

// blankRefs makes each ${var} a literal, to check a pattern before the values are known.
func blankRefs(s string) string { return refRE().ReplaceAllString(s, "x") }

func reErr(err error) string {
	return strings.TrimPrefix(cmp.Or(errors.Unwrap(err), err).Error(), "error parsing regexp: ")
}

// jsonType names, in JSON's words, the type of a value the JSON decoder made.
func jsonType(v any) string {
	return map[string]string{"<nil>": "null", "string": "a string", "bool": "a boolean", "json.Number": "a number",
		"map[string]interface {}": "an object", "[]interface {}": "a list"}[fmt.Sprintf("%T", v)]
}

// lineAt returns the 1-based line of byte offset off in data.
func lineAt(data []byte, off int) int {
	return bytes.Count(data[:min(off, len(data))], []byte("\n")) + 1
}

// jsonLines returns the line of each test of tests, a value of data, found by its text (the decoder keeps no positions).
func jsonLines(data []byte, tests json.RawMessage) (lines []int) {
	var list []json.RawMessage
	json.Unmarshal(tests, &list)
	off := bytes.Index(data, tests)
	for _, t := range list {
		off += bytes.Index(data[off:], t)
		lines = append(lines, lineAt(data, off))
		off += len(t)
	}
	return lines
}
