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
	l := &loader{format: tomlFormat, file: project.Display(root, path)}
	var top map[string]any
	if ext := strings.ToLower(filepath.Ext(path)); ext == ".json" || ext != ".toml" && bytes.HasPrefix(bytes.TrimSpace(data), []byte("{")) {
		l.format, top = jsonFormat, l.decodeJSON(data)
	} else {
		_, err := toml.Decode(string(data), &top)
		switch pe, isParse := errors.AsType[toml.ParseError](err); {
		case isParse:
			l.add(config.SyntaxLine(string(data), pe), "", pe.Message, "")
		case err != nil:
			l.add(0, "", strings.TrimPrefix(err.Error(), "toml: "), "")
		default:
			l.lines = config.TableLines(string(data), "test")
		}
	}
	if len(l.problems) == 0 {
		if s := l.suite(top); len(l.problems) == 0 {
			return s, nil
		}
	}
	// In file order, as a person fixes them; the file's own first.
	slices.SortStableFunc(l.problems, func(a, b *config.Problem) int { return cmp.Compare(a.Line, b.Line) })
	return nil, l.problems
}

// decodeJSON decodes a JSON object, numbers as written (as TOML's library keeps them).
func (l *loader) decodeJSON(data []byte) map[string]any {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	top, isObject := v.(map[string]any)
	switch se, isSyntax := errors.AsType[*json.SyntaxError](err); {
	case isSyntax:
		l.add(lineAt(data, int(se.Offset)), "", "not valid JSON: "+err.Error(), "")
	case err != nil:
		l.add(0, "", "not valid JSON: "+err.Error(), "")
	case dec.More():
		l.add(lineAt(data, int(dec.InputOffset())), "", "not valid JSON: more than one value", "")
	case !isObject:
		l.add(1, "", "must be a JSON object, not "+jsonType(v), `{"version": "1", "tests": [{"id": …, "action": …, "expect": […]}]}`)
	default: // each test's line, found by its text: the decoder keeps no positions
		var raw map[string]json.RawMessage
		var list []json.RawMessage
		json.Unmarshal(data, &raw)
		json.Unmarshal(raw["tests"], &list)
		off := bytes.Index(data, raw["tests"])
		for _, t := range list {
			off += bytes.Index(data[off:], t)
			l.lines = append(l.lines, lineAt(data, off))
			off += len(t)
		}
	}
	return top
}

// loader checks a tests file, decoded whole by its form's library, key by key: every mistake at once.
type loader struct {
	format
	file     string
	lines    []int // line of each test, by index; shorter when unknown
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
func (l *loader) add(line int, key, msg, hint string) {
	l.problems = append(l.problems, &config.Problem{File: l.file, Line: line, Key: key, Msg: msg, Hint: hint})
}

// list returns m[key], a list of values ok takes (nil: any), or none (absent, null, a problem: key must be want).
func (l *loader) list(line int, name string, m map[string]any, key, want, hint string, ok func(any) bool) []any {
	v := m[key]
	a, isList := config.Array(v)
	if v != nil && (!isList || ok != nil && slices.ContainsFunc(a, func(e any) bool { return !ok(e) })) {
		l.add(line, name, fmt.Sprintf("%s must be %s, not %s", key, want, l.typeName(v)), hint)
		return nil
	}
	return a
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

func (l *loader) suite(top map[string]any) *Suite {
	s := &Suite{File: l.file}
	var list []any
	for _, k := range slices.Sorted(maps.Keys(top)) {
		switch v := top[k]; k {
		case "version":
			switch v.(type) {
			case string, json.Number, int64, float64:
				s.Version = fmt.Sprint(v)
			default:
				l.add(0, "", "version must be a string or a number, not "+l.typeName(v), "")
			}
		case "description":
			s.Description = l.str(0, "", top, k, false, "")
		case l.testsKey:
			list = l.list(0, "", top, k, fmt.Sprintf("a list of test %ss", l.kind), "write them as "+l.example, nil)
		case "tests", "test":
			l.add(0, "", fmt.Sprintf("unknown key %q", k), fmt.Sprintf("in a %s file the tests are %s", l.name, l.example))
		default:
			l.add(0, "", fmt.Sprintf("unknown key %q", k), "known keys: version, description, "+l.testsKey)
		}
	}
	if _, isList := config.Array(top[l.testsKey]); len(list) == 0 && (isList || top[l.testsKey] == nil) {
		l.add(0, "", "has no tests", "write them as "+l.example)
	}
	first := map[string]string{} // where each id is first used
	for i, v := range list {
		t, ok := l.test(i, v)
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
	unsaved(s.Tests, func(i int, n string) { // a ${var} that no earlier test saves
		hint := "a test before this one must save it: save = {" + n + " = \"regex with (group)\"}"
		switch j := saverOf(s.Tests[i:], n); {
		case j == 0:
			hint = "a test cannot use what it saves itself; use it in a later test"
		case j > 0:
			hint = fmt.Sprintf("test %q saves it, but runs later: move that test before this one", s.Tests[i+j].ID)
		}
		l.add(s.Tests[i].Line, testKey(s.Tests[i].ID), fmt.Sprintf("uses ${%s}, which no earlier test saves", n), hint)
	})
	return s
}

// Known test keys, in the order they are checked and listed in hints.
var testKeys = []string{"id", "description", "category", "action", "expect", "save", "tags"}

// test checks and converts one test. ok is false when it has no usable id.
func (l *loader) test(i int, v any) (t Test, ok bool) {
	if i < len(l.lines) {
		t.Line = l.lines[i]
	}
	name := fmt.Sprintf("test #%d", i+1)
	m, isTable := v.(map[string]any)
	if !isTable {
		l.add(t.Line, name, fmt.Sprintf("must be %s, not %s", l.aKind, l.typeName(v)), "")
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
	t.Expect = l.expects(t.Line, name, l.list(t.Line, name, m, "expect", "a list", `expect: [{"contains": "…"}, {"regex": "…"}]`, nil))
	save, isMap := m["save"].(map[string]any)
	if m["save"] != nil && !isMap {
		l.add(t.Line, name, "save must be a map of variable to regex, not "+l.typeName(m["save"]), `save: {"token": "token: (\\w+)"}`)
	}
	t.Save = l.saves(t.Line, name, save)
	for _, tag := range l.list(t.Line, name, m, "tags", "a list of strings", "", isString) {
		t.Tags = append(t.Tags, tag.(string))
	}
	return t, t.ID != ""
}

// str returns m[key], a string; if required, present and not blank, or a problem with hint says so.
func (l *loader) str(line int, name string, m map[string]any, key string, required bool, hint string) string {
	v, present := m[key]
	s, isStr := v.(string)
	switch {
	case !present && required:
		l.add(line, name, "missing "+key, hint)
	case present && !isStr:
		l.add(line, name, fmt.Sprintf("%s must be a string, not %s", key, l.typeName(v)), "")
	case required && strings.TrimSpace(s) == "":
		l.add(line, name, key+" is empty", hint)
	}
	return s
}

func (l *loader) expects(line int, name string, list []any) []validator.Expectation {
	var out []validator.Expectation
	for j, v := range list {
		where := fmt.Sprintf("expect[%d]", j)
		m, _ := v.(map[string]any)
		if len(m) != 1 {
			l.add(line, name, where+" must have exactly one of contains, not_contains or regex", `e.g. {"contains": "hello"}`)
			continue
		}
		for k, pv := range m {
			kind := validator.Kind(k)
			p, isStr := pv.(string)
			_, err := validator.NewExpectation(kind, blankRefs(p)) // each ${var} a literal, as at run time
			switch {
			case kind != validator.Contains && kind != validator.NotContains && kind != validator.Regex:
				l.add(line, name, fmt.Sprintf("%s: unknown expectation %q", where, k), "use contains, not_contains or regex")
			case !isStr:
				l.add(line, name, fmt.Sprintf("%s: %s must be a string, not %s", where, k, l.typeName(pv)), "")
			case err != nil:
				l.add(line, name, fmt.Sprintf("%s: regex %q does not compile: %s", where, p, reErr(err)), "the syntax is Go's RE2")
			default:
				out = append(out, validator.Expectation{Kind: kind, Pattern: p})
			}
		}
	}
	return out
}

func (l *loader) saves(line int, name string, m map[string]any) []Save {
	var out []Save
	for _, k := range slices.Sorted(maps.Keys(m)) {
		p, isStr := m[k].(string)
		re, err := regexp.Compile(blankRefs(p))
		switch {
		case !validName(k):
			l.add(line, name, fmt.Sprintf("save: %q is not a variable name", k), "letters, digits and _, not starting with a digit")
		case !isStr:
			l.add(line, name, fmt.Sprintf("save.%s must be a regex string, not %s", k, l.typeName(m[k])), "")
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
