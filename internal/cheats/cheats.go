// Package cheats finds the usual ways to make a check pass without the work (the rules below, docs/cheats.md).
package cheats

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/text/encoding"
	xunicode "golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/stopgate/stopgate/internal/baseline"
	"github.com/stopgate/stopgate/internal/cli"
)

// Scan judges the files changed since arming: one "path:line: what: text" a finding, sorted.
func Scan(changes []baseline.Change) []string {
	var f []finding
	var was, now []unit
	for _, c := range changes {
		k := kindOf(c.Path)
		old, cur := lines(c.Was), lines(c.Now)
		was, now = append(was, testsOf(c.Path, k, old)...), append(now, testsOf(c.Path, k, cur)...)
		if !c.Exists {
			continue
		}
		added, err := baseline.AddedLines(old, cur)
		if err != nil {
			f = append(f, finding{c.Path, 0, "could not judge", err.Error()})
			continue
		}
		for _, i := range added {
			if r, ok := match(k, cur[i], false); ok && strings.HasPrefix(r.what, "secret") {
				f = append(f, finding{c.Path, i + 1, r.what, ""}) // not copied into the answer, the log and telemetry
			} else if ok {
				f = append(f, finding{c.Path, i + 1, r.what, cur[i]})
			}
		}
	}
	for _, c := range changes {
		if !c.Exists && kindOf(c.Path)&tests != 0 && !moved(c.Path, was, now) {
			f = append(f, finding{c.Path, 0, "test file deleted", ""})
		}
	}
	f = append(f, compare(was, now)...)
	slices.SortStableFunc(f, func(a, b finding) int {
		return cmp.Or(strings.Compare(a.path, b.path), max(a.line, -a.line)-max(b.line, -b.line), a.line-b.line)
	})
	// One finding a line (as armed, or now): the first found.
	f = slices.CompactFunc(f, func(a, b finding) bool { return a.path == b.path && a.line == b.line && a.line != 0 })
	out := make([]string, len(f))
	for i, x := range f {
		out[i] = x.String()
	}
	return out
}

// match returns the first rule for kind k (only skip rules when skip) that line breaks, /* */ removed or not.
func match(k kind, line string, skip bool) (rule, bool) {
	bare := blockComment().ReplaceAllString(line, "")
	for _, r := range rules() {
		if r.in&k == 0 || skip && !r.skip {
			continue
		}
		for _, l := range []string{line, bare} {
			if m := r.re.FindStringSubmatch(l); m != nil && (r.ok == nil || !r.ok(m)) {
				return r, true
			}
		}
	}
	return rule{}, false
}

type finding struct {
	path       string
	line       int // 0: the file as a whole; below 0: -line as armed
	what, text string
}

func (x finding) String() string {
	at := x.path
	if x.line != 0 {
		at += ":" + strconv.Itoa(max(x.line, -x.line))
	}
	if x.text == "" {
		return at + ": " + x.what
	}
	return at + ": " + x.what + ": " + cli.Clip(strings.TrimSpace(x.text), 160, "…")
}

// unit is one test as a file defines it.
type unit struct {
	path, name string
	line       int // of its definition, from 1
	skip       int // the line that skips it, 0 when none does
	asserts    int
	py         bool
}

// compare judges the tests by name, as armed and now: removed, skipped, weakened, or redefined (Python).
func compare(was, now []unit) (f []finding) {
	w, n := tallies(was), tallies(now)
	for _, name := range slices.Sorted(maps.Keys(w)) {
		wt, nt := w[name], cmp.Or(n[name], &tally{})
		switch {
		case nt.n < wt.n:
			f = append(f, finding{wt.first.path, -wt.first.line, "test removed", name + " (the line as armed: no test of that name is left)"})
		case nt.skipped > wt.skipped:
			f = append(f, finding{nt.skip.path, nt.skip.skip, "test skipped", name + " is skipped now, and was not when the prompt was armed"})
		case nt.asserts < wt.asserts:
			f = append(f, finding{nt.first.path, nt.first.line, "assertions removed", fmt.Sprintf("%s has %d, and had %d when the prompt was armed", name, nt.asserts, wt.asserts)})
		}
	}
	for _, name := range slices.Sorted(maps.Keys(n)) {
		if nt := n[name]; w[name] == nil && nt.skip != nil {
			f = append(f, finding{nt.skip.path, nt.skip.skip, "test skipped", name + " is skipped"})
		}
	}
	count := func(us []unit) map[[2]string]int {
		m := map[[2]string]int{}
		for _, u := range us {
			m[[2]string{u.path, u.name}]++
		}
		return m
	}
	wc, nc, seen := count(was), count(now), map[[2]string]bool{}
	for _, u := range now {
		k := [2]string{u.path, u.name}
		if u.py && seen[k] && nc[k] > wc[k] {
			f = append(f, finding{u.path, u.line, "test redefined", u.name + " is defined again in its scope, and hides the one before it"})
		}
		seen[k] = true
	}
	return f
}

type tally struct {
	n, skipped, asserts int
	first, skip         *unit
}

func tallies(us []unit) map[string]*tally {
	m := map[string]*tally{}
	for i := range us {
		u := &us[i]
		t := m[u.name]
		if t == nil {
			t = &tally{first: u}
			m[u.name] = t
		}
		t.n, t.asserts = t.n+1, t.asserts+u.asserts
		if u.skip > 0 {
			t.skipped, t.skip = t.skipped+1, cmp.Or(t.skip, u)
		}
	}
	return m
}

// moved reports whether a deleted file held tests, all defined elsewhere now.
func moved(path string, was, now []unit) bool {
	held := slices.DeleteFunc(slices.Clone(was), func(u unit) bool { return u.path != path })
	return len(held) > 0 && !slices.ContainsFunc(held, func(u unit) bool {
		return !slices.ContainsFunc(now, func(x unit) bool { return x.name == u.name })
	})
}

// testsOf returns the tests a file of kind k defines, skipped by a skip rule in or around them.
func testsOf(path string, k kind, ls []string) []unit {
	var out []unit
	for _, u := range units() {
		if k&u.in == 0 {
			continue
		}
		var starts []int
		heads, joined := make([]string, len(ls)), make([]int, len(ls))
		for i := range ls {
			heads[i] = blockComment().ReplaceAllString(ls[i], "")
			// it, then .skip('name' on the next line: one call.
			if i+1 < len(ls) && !u.test.MatchString(heads[i]) && !u.test.MatchString(ls[i+1]) {
				heads[i], joined[i] = heads[i]+strings.TrimSpace(ls[i+1]), 1
			}
			if u.test.MatchString(heads[i]) {
				starts = append(starts, i)
			}
		}
		ind := make([]int, len(ls)) // each line's indentation as Python reads tabs; -1 when blank
		for i, l := range ls {
			n := 0
			for _, c := range l[:len(l)-len(strings.TrimLeft(l, " \t"))] {
				if n++; c == '\t' {
					n = (n + 7) / 8 * 8 // the next tab stop
				}
			}
			if strings.TrimSpace(l) == "" {
				n = -1
			}
			ind[i] = n
		}
		for n, i := range starts {
			m := u.test.FindStringSubmatch(heads[i])
			t := unit{path: path, name: m[slices.IndexFunc(m[1:], func(s string) bool { return s != "" })+1], line: i + 1, py: u.in == pyTest}
			end := blockEnd(ls, ind, i+joined[i], t.py) // a head joined: its block is its second line's
			if n+1 < len(starts) {
				end = min(end, starts[n+1]-1)
			}
			scope := ancestors(ls, ind, i)
			for j := decorated(ls, ind, i); j <= end; j++ {
				scope = append(scope, j)
				if u.assert.MatchString(ls[j]) && j >= i {
					t.asserts++
				}
			}
			for _, j := range scope {
				if _, ok := match(k, ls[j], true); ok && t.skip == 0 {
					t.skip = j + 1
				}
				if c := pyClass().FindStringSubmatch(ls[j]); t.py && c != nil && j < i {
					t.name = c[1] + "." + t.name
				}
			}
			out = append(out, t)
		}
	}
	return out
}

var (
	pyClass      = re(`^\s*class\s+(\w+)`)
	blockComment = re(`/\*.*?\*/`)
	escape       = re(`\\u([0-9a-fA-F]{4})|\\u\{([0-9a-fA-F]{1,6})\}|\\x([0-9a-fA-F]{2})`)
	concat       = re(`(['"` + "`" + `])\s*\+?\s*(['"` + "`" + `])`)
)

// blockEnd is the last line of the block line i (or what it decorates) opens.
func blockEnd(ls []string, ind []int, i int, py bool) int {
	for i+1 < len(ls) && strings.HasPrefix(strings.TrimSpace(ls[i]), "@") {
		i++
	}
	end := i
	for j := i + 1; j < len(ls); j++ {
		switch t := strings.TrimSpace(ls[j]); {
		case ind[j] < 0:
		case ind[j] > ind[i]:
			end = j
		case ind[j] == ind[i] && !py && strings.ContainsAny(t[:1], "})]"):
			return j
		default:
			return end
		}
	}
	return end
}

// decorated is the first line of the decorators right above line i.
func decorated(ls []string, ind []int, i int) int {
	for i > 0 && ind[i-1] == ind[i] && strings.HasPrefix(strings.TrimSpace(ls[i-1]), "@") {
		i--
	}
	return i
}

// ancestors are the lines opening the blocks around line i, decorators too.
func ancestors(ls []string, ind []int, i int) []int {
	var out []int
	cur := ind[i]
	for a := i - 1; a >= 0 && cur > 0; a-- {
		if ind[a] >= 0 && ind[a] < cur {
			cur = ind[a]
			for d := decorated(ls, ind, a); d <= a; d++ {
				out = append(out, d)
			}
		}
	}
	return out
}

var lineBreaks = strings.NewReplacer("\r\n", "\n", "\r", "\n", "\u2028", "\n", "\u2029", "\n", "\u0085", "\n")

// lines is text as a language reads it, one normalized line each.
func lines(b []byte) []string {
	s := lineBreaks.Replace(decode(b))
	if s == "" {
		return nil
	}
	ls := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range ls {
		ls[i] = normal(l)
	}
	return ls
}

// decode reads UTF-16 (by its BOM or its NULs) and drops a UTF-8 BOM.
func decode(b []byte) string {
	fallback := encoding.Nop.NewDecoder()
	if len(b) >= 2 && len(b)%2 == 0 && bytes.Count(b, []byte{0}) >= len(b)/4 {
		order := xunicode.BigEndian
		if b[1] == 0 {
			order = xunicode.LittleEndian
		}
		fallback = xunicode.UTF16(order, xunicode.IgnoreBOM).NewDecoder()
	}
	s, _, _ := transform.Bytes(xunicode.BOMOverride(fallback), b)
	return string(s)
}

// normal folds a line for the rules: NFKC, plain spaces, no format characters, escapes read, literals joined.
func normal(l string) string {
	l = norm.NFKC.String(l)
	l = strings.Map(func(r rune) rune {
		switch {
		case unicode.Is(unicode.Cf, r):
			return -1
		case r != '\t' && unicode.IsSpace(r):
			return ' '
		}
		return r
	}, l)
	l = escape().ReplaceAllStringFunc(l, func(e string) string {
		m := escape().FindStringSubmatch(e)
		n, err := strconv.ParseUint(m[1]+m[2]+m[3], 16, 32)
		if err != nil || n > unicode.MaxRune {
			return e
		}
		return string(rune(n))
	})
	return concat().ReplaceAllString(l, "")
}

// In is the files a cheats check looks at when it names none: not dependencies or build output.
var In = []string{
	"*.go", "*.py", "*.pyi", "*.js", "*.jsx", "*.mjs", "*.cjs", "*.ts", "*.tsx", "*.mts", "*.cts",
	"*.json", "*.toml", "*.ini", "*.cfg", "*.yml", "*.yaml", "*.sh", "*.bash", "*.env", ".env*",
	"*.pem", "*.key", "Makefile", "*.mk", "justfile", "Justfile", "Jenkinsfile", ".husky/", ".githooks/",
	".eslintrc*", ".mocharc*", ".flake8",
	"!node_modules/", "!vendor/", "!.venv/", "!venv/", "!__pycache__/", "!dist/", "!build/", "!coverage/",
	"!package-lock.json", "!pnpm-lock.yaml",
}

// kind is what a file is to the rules, by its path.
type kind uint16

const (
	goSrc kind = 1 << iota
	goTest
	jsSrc
	jsTest
	pySrc
	pyTest // collected test modules and conftest.py
	testConf
	lintConf
	script // build scripts, hooks and CI
	code   // any file but prose
	anyFile
)

const tests = goTest | jsTest | pyTest

// rule is one thing an agent adds to make a check pass without the work.
type rule struct {
	in   kind
	what string
	re   *regexp.Regexp
	skip bool                    // marks the test it is in, or opens, skipped
	ok   func(sub []string) bool // a match that is benign after all
}

// rules are matched against added lines, the skip rules against each test as it was and is.
// Every regular expression here compiles on first use: at start-up they cost each detect call 1 ms.
var rules = sync.OnceValue(func() []rule {
	re := regexp.MustCompile
	return []rule{
		{in: goSrc, what: "test skipped", skip: true, re: re(`\.\s*Skip(Now|f)?\b|^\s*Skip(Now|f)?\s*\(|["` + "`" + `]Skip(Now|f)?["` + "`" + `]`)},
		{in: goSrc, what: "test skipped unless run in full (testing.Short)", skip: true, re: re(`\btesting\s*\.\s*Short\b`)},
		{in: goTest, what: "build constraint on a test file", re: re(`^\s*//\s*(go:build|\+build)\b`)},
		{in: jsTest, what: "test skipped, focused or left to do", skip: true, re: re(`\b(it|test|describe|suite|context|bench)\s*\.\s*(skip|only|todo|skipIf|runIf|fails)\b|^\s*\.\s*(skip|only|todo)\b|\b(xit|xtest|xdescribe|xcontext|fit|fdescribe)\s*\(|\[\s*['"` + "`" + `](skip|only|todo)['"` + "`" + `]\s*\]`)},
		{in: pySrc, what: "test skipped", skip: true, re: re(`\bmark\s*\.\s*(skip|skipif|xfail)\b|\bpytest\s*\.\s*(skip|xfail|importorskip)\b|\bunittest\s*\.\s*skip|\bSkipTest\b|\bskipTest\b`)},
		{in: pyTest, what: "test skipped", skip: true, re: re(`\b(skip|skipif|skipIf|skipUnless|xfail|importorskip)\b|^\s*__test__\s*=\s*False\b`)},
		{in: tests, what: "test code made dead", skip: true, re: re(`\bif\s*\(?\s*(false|False|0|None)\s*\)?\s*[:{]`)},
		{in: tests, what: "assertion that cannot fail", re: re(`^\s*assert\s+(True|1|not\s+(False|None|0))\s*(,|#|$)|\bexpect\s*\(\s*(true|1|!0)\s*\)\s*\.\s*(toBe|toEqual|toStrictEqual|toBeTruthy)\b|\bassert(\.ok)?\s*\(\s*true\s*\)|\bassert\w*\s*\.\s*True\s*\(\s*\w+\s*,\s*true\s*\)|\bassertTrue\s*\(\s*True\s*\)`)},
		{in: goSrc, what: "lint suppressed", re: re(`//\s*nolint\b|//\s*lint:(file-)?ignore\b|#nosec\b`)},
		{in: jsSrc, what: "lint or type check suppressed", re: re(`eslint-disable|@ts-(ignore|nocheck|expect-error)\b|\b(istanbul|c8|v8)\s+ignore\b|biome-ignore|deno-lint-ignore|oxlint-disable|\$FlowFixMe`)},
		{in: pySrc, what: "lint or type check suppressed", re: re(`#\s*type\s*:\s*ignore|#\s*noqa\b|#\s*pragma\s*:\s*no\s*(cover|branch)|#\s*(pylint|pyright|mypy|ruff|flake8)\s*:\s*(disable|ignore|noqa|basic)|#\s*nosec\b|#\s*pyre-(ignore|fixme)`)},
		{in: pySrc, what: "source encoding other than UTF-8 declared", re: re(`^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`),
			ok: func(s []string) bool {
				return slices.Contains([]string{"utf-8", "utf8", "utf_8", "utf-8-sig", "ascii", "us-ascii"}, strings.ToLower(s[1]))
			}},
		{in: testConf, what: "tests excluded by config", re: re(`\b(testPathIgnorePatterns|modulePathIgnorePatterns|testIgnore|exclude|passWithNoTests|testNamePattern|testMatch|testRegex|grep|ignore|include)["']?\s*[:=]`)},
		{in: testConf | pyTest, what: "tests excluded by config", re: re(`--ignore(-glob)?[=\s]|--deselect|(^|[\s"'\[,=])-k\b|-m\s*["']?not\b|\bnorecursedirs\b|\bcollect_ignore|\btestpaths\b|\bpython_(files|functions|classes)\b|\bpytest_(collection_modifyitems|ignore_collect)\b`)},
		{in: lintConf, what: "lint or type check loosened by config", re: re(`(?i)["']off["']|\b(disable|ignore|exclude|extend-ignore|per-file-ignores|ignore_errors|skip-dirs|skip-files|skipLibCheck)\b|"(strict\w*|noImplicit\w*|checkJs)"\s*:\s*false`)},
		{in: script, what: "tests narrowed in a script", re: re(`\bgo\s+test\b.*\s-(tags|run|skip|short)\b|\bGOFLAGS\b.*-tags|\b(py\.test|pytest)\b.*\s(--ignore|--deselect|-k\b|-m\s*["']?not\b)|\b(jest|vitest|mocha)\b.*\s(--testPathIgnorePatterns|--exclude|--testNamePattern|-t\b|--grep|--passWithNoTests|--ignore)`)},
		{in: code, what: "git hooks bypassed", re: re(`--no-verify\b|\bHUSKY\s*=\s*0\b|\bgit\s+commit\b[^;&|]*\s-n\b|\bcore\.hooksPath\b`)},
		{in: anyFile, what: "secret added (private key)", re: re(`-----BEGIN [A-Z ]*PRIVATE KEY( BLOCK)?-----`)},
		{in: anyFile, what: "secret added (AWS access key)", re: re(`\b(AKIA|ASIA)[0-9A-Z]{16}\b`), ok: func(s []string) bool { return strings.HasSuffix(s[0], "EXAMPLE") }},
		{in: anyFile, what: "secret added (token)", re: re(`\b(gh[pousr]_[A-Za-z0-9]{36}|github_pat_\w{40,}|xox[abprs]-[A-Za-z0-9-]{10,}|sk_live_[0-9A-Za-z]{20,}|sk-(proj-|ant-)?[A-Za-z0-9_-]{32,}|AIza[0-9A-Za-z_-]{35})`)},
		{in: anyFile, what: "secret added", re: re(`(?i)(api[_-]?key|secret|token|passw(or)?d|passwd|access[_-]?key|credential)\w*["']?\s*[:=]\s*(["']([^"'\s]{16,})["']|([^"'\s]{16,})\s*$)`),
			ok: func(s []string) bool {
				return !secretLike(s[4]) && (s[5] == "" || dotted().MatchString(s[5]) || !secretLike(s[5]))
			}},
	}
})

func re(s string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(s) })
}

var (
	jsTestName = re(`(^|[._-])(test|spec)\.[cm]?[jt]sx?$|^test([-_.].*)?\.[cm]?js$`)
	testConfs  = re(`^(jest|vitest|vite|playwright|karma)\.(config|workspace|conf)\.[cm]?[jt]s$|^\.mocharc|^package\.json$|^(pytest\.ini|pyproject\.toml|setup\.cfg|tox\.ini|conftest\.py)$`)
	lintConfs  = re(`^\.eslintrc|^eslint\.config\.|^\.golangci\.|^tsconfig.*\.json$|^(pyproject\.toml|setup\.cfg|tox\.ini|\.flake8|mypy\.ini|ruff\.toml|\.ruff\.toml|\.pylintrc|pylintrc)$`)
	scripts    = re(`^(Makefile|GNUmakefile|justfile|Justfile|Jenkinsfile|package\.json|tox\.ini|noxfile\.py|\.gitlab-ci\.ya?ml|\.pre-commit-config\.ya?ml|lefthook\.ya?ml|Taskfile\.ya?ml)$|\.(sh|bash|mk)$|(^|/)(\.github/workflows|\.circleci|\.husky|\.githooks)/`)
	dotted     = re(`^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$`) // a lookup, not a value
	prose      = re(`\.(md|markdown|txt|rst|adoc)$`)
)

// kindOf is what the file at p is to the rules; a test file is one its runner collects.
func kindOf(p string) kind {
	base, segs := path.Base(p), strings.Split(p, "/")
	k := anyFile | when(!prose().MatchString(base), code)
	switch path.Ext(base) {
	case ".go":
		hidden := slices.ContainsFunc(segs, func(s string) bool { return s == "testdata" || s[0] == '_' || s[0] == '.' })
		k |= goSrc | when(strings.HasSuffix(base, "_test.go") && !hidden, goTest)
	case ".py", ".pyi":
		k |= pySrc | when(strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py") || base == "conftest.py", pyTest)
	case ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts":
		dir := slices.ContainsFunc(segs[:len(segs)-1], func(s string) bool { return s == "__tests__" || s == "test" || s == "tests" })
		k |= jsSrc | when(dir || jsTestName().MatchString(base), jsTest)
	}
	return k | when(testConfs().MatchString(base), testConf) | when(lintConfs().MatchString(base), lintConf) |
		when(scripts().MatchString(base) || scripts().MatchString(p), script)
}

// when is k if on, else no kind.
func when(on bool, k kind) kind {
	if on {
		return k
	}
	return 0
}

// units are, per test file kind, a test's start (its name the first non-empty group) and an assertion.
type syntax struct {
	in           kind
	test, assert *regexp.Regexp
}

var units = sync.OnceValue(func() []syntax {
	re := regexp.MustCompile
	return []syntax{
		{goTest, re(`^func\s+((?:Test|Fuzz)\w*)\s*\(`),
			re(`\b\w+\s*\.\s*(Error|Errorf|Fatal|Fatalf|Fail|FailNow)\s*\(|\b(assert|require|is|qt)\s*\.\s*[A-Z]\w*\s*\(|\bExpect\s*\(`)},
		{pyTest, re(`^\s*(?:async\s+)?def\s+(test\w*)\s*\(`),
			re(`^\s*assert\b|\bself\s*\.\s*(assert\w*|fail\w*)\s*\(|\bpytest\s*\.\s*(raises|warns|fail)\b|\.assert_\w+\s*\(`)},
		{jsTest, re(`\b(?:[xf]?it|x?test)\s*(?:\.\s*\w+\s*|\[\s*['"` + "`" + `]\w+['"` + "`" + `]\s*\]\s*)*\(\s*(?:'([^']*)'|"([^"]*)"|` + "`([^`]*)`" + `)`),
			re(`\bexpect\s*(\.\s*\w+\s*)?\(|\bassert\b|\.should\b|\bt\s*\.\s*(is|not|deepEqual|true|false|truthy|falsy|throws|assert|equal|ok|match|snapshot)\s*\(`)},
	}
})

// secretLike reports whether v looks like a real secret: letters and digits, dense.
func secretLike(v string) bool {
	lower := strings.ToLower(v)
	if strings.ContainsAny(v, "()${}<>") || strings.Contains(lower, "example") || strings.Contains(lower, "xxxx") ||
		!strings.ContainsAny(v, "0123456789") || !strings.ContainsAny(lower, "abcdefghijklmnopqrstuvwxyz") {
		return false
	}
	// The Shannon entropy of v, in bits a character.
	counts := map[rune]float64{}
	for _, r := range v {
		counts[r]++
	}
	n, h := float64(len([]rune(v))), 0.0
	for _, c := range counts {
		h -= c / n * math.Log2(c/n)
	}
	return h >= 3.5
}
