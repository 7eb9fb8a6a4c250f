package cheats

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stopgate/stopgate/internal/baseline"
)

func edit(p, was, now string) baseline.Change {
	return baseline.Change{Path: p, Was: []byte(was), Now: []byte(now), Existed: true, Exists: true}
}
func add(p, now string) baseline.Change {
	return baseline.Change{Path: p, Now: []byte(now), Exists: true}
}
func del(p, was string) baseline.Change {
	return baseline.Change{Path: p, Was: []byte(was), Existed: true}
}

func utf16le(s string) string {
	b := []byte{0xff, 0xfe}
	for _, u := range utf16.Encode([]rune(s)) {
		b = append(b, byte(u), byte(u>>8))
	}
	return string(b)
}

const goWas = `package a

import "testing"

func TestA(t *testing.T) {
	if got() != 1 {
		t.Fatal("got")
	}
	if other() != 2 {
		t.Errorf("other")
	}
}
`

// goSkip is goWas with a line inserted before line 6 of it.
func goWith(line string) string {
	return strings.Replace(goWas, "\tif got()", line+"\n\tif got()", 1)
}

const goTwo = `package a

import "testing"

func TestFlaky(t *testing.T) {
	t.Skip("flaky")
}

func TestImportant(t *testing.T) {
	if got() != 2 {
		t.Fatal("bad")
	}
}
`

const goKeptSkip = `package a

import "testing"

func TestImportant(t *testing.T) {
	t.Skip("flaky")
	if got() != 2 {
		t.Fatal("bad")
	}
}
`

const jsWas = `import { add } from '../src/add.js';

describe('add', () => {
  it('adds', () => {
    expect(add(1, 2)).toBe(3);
    expect(add(2, 2)).toBe(4);
  });
});
`

func jsWith(from, to string) string { return strings.Replace(jsWas, from, to, 1) }

const jsSkippedBlock = `describe.skip('flaky', () => {
  it('old', () => {});
});

describe('core', () => {
  it('adds', () => {
    expect(add(1, 2)).toBe(3);
  });
});
`

const jsMovedIntoSkip = `describe.skip('flaky', () => {
  it('old', () => {});
  it('adds', () => {
    expect(add(1, 2)).toBe(3);
  });
});
`

const pyWas = `import pytest


def test_important():
    assert compute() == 3
    assert compute() > 0
`

func pyWith(from, to string) string { return strings.Replace(pyWas, from, to, 1) }

const pyTwo = `import pytest


@pytest.mark.skip(reason="flaky")
def test_flaky():
    assert flaky()


def test_important():
    assert compute() == 3
`

const pyKeptSkip = `import pytest


@pytest.mark.skip(reason="flaky")
def test_important():
    assert compute() == 3
`

// TestScan is the evasions per language, each found with its file and
// line, and ordinary edits that must find nothing.
func TestScan(t *testing.T) {
	tests := []struct {
		name    string
		changes []baseline.Change
		want    []string // prefixes of the findings, in order
	}{
		// Go.
		{"go t.Skip", []baseline.Change{edit("a_test.go", goWas, goWith(`	t.Skip("flaky")`))}, []string{"a_test.go:6: test skipped: t.Skip"}},
		{"go SkipNow", []baseline.Change{edit("a_test.go", goWas, goWith(`	t.SkipNow()`))}, []string{"a_test.go:6: test skipped"}},
		{"go Skipf", []baseline.Change{edit("a_test.go", goWas, goWith(`	t.Skipf("later %d", 1)`))}, []string{"a_test.go:6: test skipped"}},
		{"go Skip by method value", []baseline.Change{edit("a_test.go", goWas, goWith(`	s := t.Skip; s()`))}, []string{"a_test.go:6: test skipped"}},
		{"go Skip across a line break", []baseline.Change{edit("a_test.go", goWas, goWith("\tt.\n\t\tSkip()"))}, []string{"a_test.go:7: test skipped"}},
		{"go Skip by reflection, joined", []baseline.Change{edit("a_test.go", goWas, goWith(`	reflect.ValueOf(t).MethodByName("Sk" + "ip").Call(nil)`))}, []string{"a_test.go:6: test skipped"}},
		{"go Skip behind a no-break space", []baseline.Change{edit("a_test.go", goWas, goWith("\tt\u00a0.\u00a0Skip()"))}, []string{"a_test.go:6: test skipped"}},
		{"go build ignore", []baseline.Change{edit("a_test.go", goWas, "//go:build ignore\n\n"+goWas)}, []string{"a_test.go:1: build constraint on a test file"}},
		{"go +build tag", []baseline.Change{edit("a_test.go", goWas, "// +build integration\n\n"+goWas)}, []string{"a_test.go:1: build constraint on a test file"}},
		{"go testing.Short gate", []baseline.Change{edit("a_test.go", goWas, goWith("\tif testing.Short() {\n\t\treturn\n\t}"))}, []string{"a_test.go:6: test skipped unless run in full"}},
		{"go test renamed to a non-test", []baseline.Change{edit("a_test.go", goWas, strings.Replace(goWas, "TestA", "testA", 1))}, []string{"a_test.go:5: test removed: TestA"}},
		{"go kept skip, function above renamed", []baseline.Change{edit("a_test.go", goTwo, goKeptSkip)}, []string{"a_test.go:5: test removed: TestFlaky", "a_test.go:6: test skipped"}},
		{"go assertion removed", []baseline.Change{edit("a_test.go", goWas, strings.Replace(goWas, "\t\tt.Errorf(\"other\")\n", "", 1))}, []string{"a_test.go:5: assertions removed: TestA has 1, and had 2"}},
		{"go test file deleted", []baseline.Change{del("a_test.go", goWas)}, []string{"a_test.go: test file deleted", "a_test.go:5: test removed: TestA"}},
		{"go test file renamed out of go test's sight", []baseline.Change{del("a_test.go", goWas), add("_a_test.go", goWas)}, []string{"a_test.go: test file deleted", "a_test.go:5: test removed"}},
		{"go nolint", []baseline.Change{edit("a.go", "package a\n\nvar x = 1\n", "package a\n\nvar x = 1 //nolint:unused\n")}, []string{"a.go:3: lint suppressed"}},
		{"go CRLF", []baseline.Change{edit("a_test.go", goWas, strings.ReplaceAll(goWith(`	t.Skip()`), "\n", "\r\n"))}, []string{"a_test.go:6: test skipped"}},
		{"go UTF-16", []baseline.Change{edit("a_test.go", goWas, utf16le(goWith(`	t.Skip()`)))}, []string{"a_test.go:6: test skipped"}},
		{"go dead code", []baseline.Change{edit("a_test.go", goWas, goWith("\tif false {"))}, []string{"a_test.go:6: test code made dead"}},
		// JavaScript and TypeScript.
		{"js it.skip", []baseline.Change{edit("test/add.test.js", jsWas, jsWith("it('adds'", "it.skip('adds'"))}, []string{"test/add.test.js:4: test skipped, focused or left to do"}},
		{"js describe.skip", []baseline.Change{edit("add.spec.ts", jsWas, jsWith("describe('add'", "describe.skip('add'"))}, []string{"add.spec.ts:3: test skipped"}},
		{"js test.skip", []baseline.Change{edit("add.test.js", jsWas, jsWith("it('adds'", "test.skip('adds'"))}, []string{"add.test.js:4: test skipped"}},
		{"js xit", []baseline.Change{edit("add.test.js", jsWas, jsWith("it('adds'", "xit('adds'"))}, []string{"add.test.js:4: test skipped"}},
		{"js xdescribe", []baseline.Change{edit("add.test.js", jsWas, jsWith("describe('add'", "xdescribe('add'"))}, []string{"add.test.js:3: test skipped"}},
		{"js only", []baseline.Change{edit("add.test.js", jsWas, jsWith("it('adds'", "it.only('adds'"))}, []string{"add.test.js:4: test skipped, focused"}},
		{"js todo", []baseline.Change{edit("add.test.js", jsWas, jsWas+"test.todo('subtracts');\n")}, []string{"add.test.js:9: test skipped, focused or left to do"}},
		{"js skip on the next line", []baseline.Change{edit("add.test.js", jsWas, jsWith("it('adds'", "it\n  .skip('adds'"))}, []string{"add.test.js:5: test skipped"}},
		{"js skip by index", []baseline.Change{edit("add.test.js", jsWas, jsWith("it('adds'", "it['skip']('adds'"))}, []string{"add.test.js:4: test skipped"}},
		{"js skip behind a comment", []baseline.Change{edit("add.test.js", jsWas, jsWith("it('adds'", "it/**/.skip('adds'"))}, []string{"add.test.js:4: test skipped"}},
		{"js skip spelt with an escape", []baseline.Change{edit("add.test.js", jsWas, jsWith("it('adds'", `it.\u0073kip('adds'`))}, []string{"add.test.js:4: test skipped"}},
		{"js skip after a line separator", []baseline.Change{edit("add.test.js", jsWas, jsWith("it('adds'", "0;\u2028it.skip('adds'"))}, []string{"add.test.js:5: test skipped"}},
		{"js test moved into a skipped block", []baseline.Change{edit("add.test.js", jsSkippedBlock, jsMovedIntoSkip)}, []string{"add.test.js:1: test skipped: adds is skipped now"}},
		{"js expect(true)", []baseline.Change{edit("add.test.js", jsWas, jsWith("    expect(add(2, 2)).toBe(4);", "    expect(true).toBe(true);"))}, []string{"add.test.js:6: assertion that cannot fail"}},
		{"js assertion removed", []baseline.Change{edit("add.test.js", jsWas, jsWith("    expect(add(2, 2)).toBe(4);\n", ""))}, []string{"add.test.js:4: assertions removed: adds has 1, and had 2"}},
		{"js test file deleted", []baseline.Change{del("add.test.js", jsWas)}, []string{"add.test.js: test file deleted", "add.test.js:4: test removed: adds"}},
		{"js eslint-disable", []baseline.Change{edit("src/a.js", "let x = 1;\n", "// eslint-disable-next-line\nlet x = 1;\n")}, []string{"src/a.js:1: lint or type check suppressed"}},
		{"ts-ignore", []baseline.Change{edit("src/a.ts", "let x: number = f();\n", "// @ts-ignore\nlet x: number = f();\n")}, []string{"src/a.ts:1: lint or type check suppressed"}},
		{"ts-nocheck", []baseline.Change{add("src/b.ts", "// @ts-nocheck\nexport {};\n")}, []string{"src/b.ts:1: lint or type check suppressed"}},
		{"ts-expect-error", []baseline.Change{edit("src/a.tsx", "let x = f();\n", "/* @ts-expect-error */\nlet x = f();\n")}, []string{"src/a.tsx:1: lint or type check suppressed"}},
		{"jest testPathIgnorePatterns", []baseline.Change{edit("jest.config.js", "module.exports = {\n};\n", "module.exports = {\n  testPathIgnorePatterns: ['slow'],\n};\n")}, []string{"jest.config.js:2: tests excluded by config"}},
		{"vitest exclude", []baseline.Change{edit("vitest.config.ts", "export default {\n  test: {},\n};\n", "export default {\n  test: { exclude: ['**/add.test.ts'] },\n};\n")}, []string{"vitest.config.ts:2: tests excluded by config"}},
		// Python.
		{"py mark.skip", []baseline.Change{edit("tests/test_a.py", pyWas, pyWith("def test_important", "@pytest.mark.skip\ndef test_important"))}, []string{"tests/test_a.py:4: test skipped"}},
		{"py skipif", []baseline.Change{edit("test_a.py", pyWas, pyWith("def test_important", "@pytest.mark.skipif(True, reason='x')\ndef test_important"))}, []string{"test_a.py:4: test skipped"}},
		{"py xfail", []baseline.Change{edit("a_test.py", pyWas, pyWith("def test_important", "@pytest.mark.xfail\ndef test_important"))}, []string{"a_test.py:4: test skipped"}},
		{"py skip by alias", []baseline.Change{edit("test_a.py", pyWas, pyWith("def test_important", "skip = pytest.mark.skip\n\n\n@skip\ndef test_important"))}, []string{"test_a.py:4: test skipped", "test_a.py:7: test skipped"}},
		{"py alias kept, decorator added", []baseline.Change{edit("test_a.py", "skip = pytest.mark.skip\n"+pyWas, "skip = pytest.mark.skip\n"+pyWith("def test_important", "@skip\ndef test_important"))}, []string{"test_a.py:5: test skipped"}},
		{"py unittest.skip", []baseline.Change{edit("test_a.py", pyWas, pyWith("def test_important", "@unittest.skip('x')\ndef test_important"))}, []string{"test_a.py:4: test skipped"}},
		{"py raise SkipTest", []baseline.Change{edit("test_a.py", pyWas, pyWith("    assert compute() == 3", "    raise unittest.SkipTest('later')\n    assert compute() == 3"))}, []string{"test_a.py:5: test skipped"}},
		{"py fullwidth skip", []baseline.Change{edit("test_a.py", pyWas, pyWith("def test_important", "@pytest.mark.ｓｋｉｐ\ndef test_important"))}, []string{"test_a.py:4: test skipped"}},
		{"py coding utf-7", []baseline.Change{edit("test_a.py", pyWas, "# -*- coding: utf-7 -*-\n"+pyWas)}, []string{"test_a.py:1: source encoding other than UTF-8 declared"}},
		{"py coding latin-1", []baseline.Change{add("src/m.py", "# coding=latin-1\nx = 1\n")}, []string{"src/m.py:1: source encoding other than UTF-8"}},
		{"py kept skip, function below renamed", []baseline.Change{edit("test_a.py", pyTwo, pyKeptSkip)}, []string{"test_a.py:4: test skipped: test_important is skipped now", "test_a.py:5: test removed: test_flaky"}},
		{"py renamed out of collection", []baseline.Change{edit("test_a.py", pyWas, pyWith("def test_important", "def _test_important"))}, []string{"test_a.py:4: test removed: test_important"}},
		{"py redefined", []baseline.Change{edit("test_a.py", pyWas, pyWas+"\n\ndef test_important():\n    pass\n")}, []string{"test_a.py:9: test redefined"}},
		{"py assert True", []baseline.Change{edit("test_a.py", pyWas, pyWith("    assert compute() > 0", "    assert True"))}, []string{"test_a.py:6: assertion that cannot fail"}},
		{"py assertion removed", []baseline.Change{edit("test_a.py", pyWas, pyWith("    assert compute() > 0\n", ""))}, []string{"test_a.py:4: assertions removed: test_important has 1, and had 2"}},
		{"py class skipped", []baseline.Change{edit("test_c.py", "import unittest\n\n\nclass TestC(unittest.TestCase):\n    def test_c(self):\n        self.assertEqual(c(), 1)\n", "import unittest\n\n\n@unittest.skip('x')\nclass TestC(unittest.TestCase):\n    def test_c(self):\n        self.assertEqual(c(), 1)\n")}, []string{"test_c.py:4: test skipped"}},
		{"py type ignore", []baseline.Change{edit("src/m.py", "x: int = f()\n", "x: int = f()  #type:ignore\n")}, []string{"src/m.py:1: lint or type check suppressed"}},
		{"py noqa", []baseline.Change{edit("src/m.py", "import os\n", "import os  # noqa: F401\n")}, []string{"src/m.py:1: lint or type check suppressed"}},
		{"py pragma no cover", []baseline.Change{edit("src/m.py", "def f():\n    pass\n", "def f():  # pragma: no cover\n    pass\n")}, []string{"src/m.py:1: lint or type check suppressed"}},
		{"pytest.ini --ignore", []baseline.Change{edit("pytest.ini", "[pytest]\naddopts = -q\n", "[pytest]\naddopts = -q --ignore=tests/test_a.py\n")}, []string{"pytest.ini:2: tests excluded by config"}},
		{"pyproject -k", []baseline.Change{edit("pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-q\"\n", "[tool.pytest.ini_options]\naddopts = \"-q -k 'not important'\"\n")}, []string{"pyproject.toml:2: tests excluded by config"}},
		{"conftest collect_ignore", []baseline.Change{add("conftest.py", "collect_ignore = ['test_a.py']\n")}, []string{"conftest.py:1: tests excluded by config"}},
		{"py lone CR line breaks", []baseline.Change{edit("test_a.py", pyWas, strings.ReplaceAll(pyWith("    assert compute() == 3", "    pytest.skip()\n    assert compute() == 3"), "\n", "\r"))}, []string{"test_a.py:5: test skipped"}},
		// Scripts, hooks, CI and secrets.
		{"no-verify in a hook", []baseline.Change{edit(".husky/pre-push", "npm test\n", "git push --no-verify\n")}, []string{".husky/pre-push:1: git hooks bypassed"}},
		{"no-verify in CI", []baseline.Change{edit(".github/workflows/ci.yml", "steps:\n", "steps:\n  - run: git commit --no-verify -m x\n")}, []string{".github/workflows/ci.yml:2: git hooks bypassed"}},
		{"go test tags in a Makefile", []baseline.Change{edit("Makefile", "test:\n\tgo test ./...\n", "test:\n\tgo test -tags fast ./...\n")}, []string{"Makefile:2: tests narrowed in a script"}},
		{"private key", []baseline.Change{add("deploy/id_rsa.pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n")}, []string{"deploy/id_rsa.pem:1: secret added (private key)"}},
		{"AWS key", []baseline.Change{edit("src/cfg.py", "REGION = 'eu'\n", "REGION = 'eu'\nKEY = 'AKIAZ7Q4LMNB2XKE5RTY'\n")}, []string{"src/cfg.py:2: secret added (AWS access key)"}},
		{"generic api key", []baseline.Change{edit("src/cfg.js", "", "const api_key = \"q8F3kLz9Xv2Wm7Rt4Yp1\";\n")}, []string{"src/cfg.js:1: secret added"}},
		{"env file secret", []baseline.Change{add(".env", "DB_PASSWORD=Zq81mN4vXr92LpQe7\n")}, []string{".env:1: secret added"}},
		// Ordinary edits: nothing.
		{"go clean edit", []baseline.Change{
			edit("a_test.go", goWas, strings.Replace(goWas, "!= 1", "!= 3", 1)+"\nfunc TestB(t *testing.T) {\n\tif b() {\n\t\tt.Error(\"b\")\n\t}\n}\n"),
			edit("a.go", "package a\n\nfunc got() int { return 1 }\n", "package a\n\n// got is three now.\nfunc got() int { return 3 }\n"),
		}, nil},
		{"go test moved to another file", []baseline.Change{del("a_test.go", goWas), add("b_test.go", goWas)}, nil},
		{"go test renamed to a test", []baseline.Change{edit("a_test.go", goWas, strings.Replace(goWas, "TestA", "TestAdd", 1))}, []string{"a_test.go:5: test removed: TestA"}},
		{"js clean edit", []baseline.Change{
			edit("add.test.js", jsWas, jsWith("  });\n});", "  });\n  it('adds negatives', () => {\n    expect(add(-1, -2)).toBe(-3);\n  });\n});")),
			edit("src/db.js", "const rows = q.limit(10);\n", "const rows = q.skip(10).limit(10);\n"),
		}, nil},
		{"py clean edit", []baseline.Change{
			edit("test_a.py", pyWas, pyWas+"\n\ndef test_skip_header():\n    assert parse('h\\n1') == [1]\n"),
			edit("src/m.py", "def parse(t):\n    pass\n", "# coding: utf-8\ndef parse(t, skip_header=True):\n    return [int(x) for x in t.split()[1:]]\n"),
			edit("src/cfg.py", "", "api_key = os.environ['API_KEY']\npassword = settings.database.password_v2\nKEY = 'AKIAIOSFODNN7EXAMPLE'\n"),
		}, nil},
		{"configs and scripts edited", []baseline.Change{
			edit("package.json", "{\n  \"scripts\": {}\n}\n", "{\n  \"scripts\": {\"lint\": \"eslint . --ignore-pattern dist\", \"test\": \"vitest run\"},\n  \"devDependencies\": {\"vitest\": \"^1.0.0\"}\n}\n"),
			edit("tsconfig.json", "{}\n", "{\n  \"include\": [\"src\"]\n}\n"),
			edit("release.sh", "", "git commit -m release && grep -n version go.mod\n"),
			edit(".github/workflows/ci.yml", "", "env:\n  token: ${{ secrets.GITHUB_TOKEN }}\n"),
		}, nil},
		{"git commit -n", []baseline.Change{edit("release.sh", "", "git commit -n -m release\n")}, []string{"release.sh:1: git hooks bypassed"}},
		{"docs mention no-verify", []baseline.Change{edit("README.md", "", "Never commit with --no-verify.\n")}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Scan(tt.changes)
			ok := len(got) == len(tt.want)
			for i := 0; ok && i < len(got); i++ {
				ok = strings.HasPrefix(got[i], tt.want[i])
			}
			if !ok {
				t.Errorf("Scan found\n\t%s\nwant\n\t%s", strings.Join(got, "\n\t"), strings.Join(tt.want, "\n\t"))
			}
		})
	}
}

// TestPatternsCompile compiles every pattern, since they compile on first
// use and a bad one would otherwise panic only in the scan that needs it.
func TestPatternsCompile(t *testing.T) {
	rules()
	units()
	for _, p := range []func() *regexp.Regexp{jsTestName, testConfs, lintConfs, scripts, dotted, prose, pyClass, blockComment, escape, concat} {
		p()
	}
}
