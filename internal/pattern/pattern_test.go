package pattern

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// cases pins the semantics, each one as git has it: TestGit asks git.
var cases = []struct {
	pats []string
	path string
	want bool
}{
	// No slash but a trailing one: any depth.
	{[]string{"*.go"}, "main.go", true},
	{[]string{"*.go"}, "internal/x/y.go", true},
	{[]string{"*.go"}, "go.mod", false},
	{[]string{"*_test.go"}, "deep/down/a_test.go", true},
	{[]string{"go.mod"}, "sub/go.mod", true},
	{[]string{"docs"}, "a/docs/x.md", true}, // a directory: every file under it
	{[]string{"src"}, "src", true},
	{[]string{"*"}, ".hidden", true},
	// A slash at the start or in the middle anchors at the root.
	{[]string{"/go.mod"}, "go.mod", true},
	{[]string{"/go.mod"}, "sub/go.mod", false},
	{[]string{"/*_test.go"}, "deep/a_test.go", false},
	{[]string{"/*_test.go"}, "a_test.go", true},
	{[]string{"/src"}, "src/x.c", true},
	{[]string{"src/*.c"}, "src/a.c", true},
	{[]string{"src/*.c"}, "src/x/a.c", false},
	{[]string{"src/*.py"}, "src/x/a.py", false},
	{[]string{"docs/*.md"}, "x/docs/a.md", false},
	{[]string{"a/b"}, "a/b", true},
	{[]string{"a/b"}, "x/a/b", false},
	// A trailing slash: directories only, at any depth (baseline's globs
	// anchored "tests/" at the root).
	{[]string{"src/"}, "src/x/a.c", true},
	{[]string{"src/"}, "src", false},
	{[]string{"tests/"}, "tests/unit/test_a.py", true},
	{[]string{"tests/"}, "src/tests/a.py", true},
	// *, ?, [...], and ** across directories.
	{[]string{"?.go"}, "ab.go", false},
	{[]string{"te?t/[ab].go"}, "test/a.go", true},
	{[]string{"te?t/[ab].go"}, "test/c.go", false},
	{[]string{"[ab].txt"}, "b.txt", true},
	{[]string{"[!a].go"}, "b.go", true},
	{[]string{"[!a].go"}, "a.go", false},
	{[]string{`\!x`}, "!x", true},
	{[]string{"**/*_test.go"}, "a_test.go", true},
	{[]string{"**/*_test.go"}, "internal/x/a_test.go", true},
	{[]string{"**/*_test.go"}, "internal/x/a.go", false},
	{[]string{"**/*.go"}, "a/b/c.go", true},
	{[]string{"**/b"}, "b", true},
	{[]string{"src/**/*.py"}, "src/a.py", true},
	{[]string{"src/**/*.py"}, "src/x/y/a.py", true},
	{[]string{"a/**/z"}, "a/z", true},
	{[]string{"a/**/z"}, "a/b/c/z", true},
	{[]string{"a/**"}, "a/b/c", true},
	{[]string{"a/**"}, "a", false},
	// ! takes back, the last match wins (baseline's globs refused "!").
	{[]string{"*.go", "!*_test.go"}, "x_test.go", false},
	{[]string{"*.go", "!*_test.go"}, "x.go", true},
	{[]string{"*.go", "!*_test.go", "keep_test.go"}, "keep_test.go", true},
	{[]string{"**/*.go", "!**/testdata/**"}, "internal/x/testdata/a.go", false},
	{[]string{"!x", "x"}, "x", true},
	// ... but nothing under a selected directory, and a negated directory
	// does not take back the files in it.
	{[]string{"src/", "!src/gen/"}, "src/gen/x", true},
	{[]string{"*.go", "!testdata/"}, "testdata/a.go", true},
}

func TestMatch(t *testing.T) {
	for _, tc := range cases {
		s, err := Compile(tc.pats)
		if err != nil {
			t.Fatalf("%q: %v", tc.pats, err)
		}
		if got := s.Match(tc.path); got != tc.want {
			t.Errorf("%q match %q = %v, want %v", tc.pats, tc.path, got, tc.want)
		}
	}
}

// TestGit asks git check-ignore the same questions: each case is a folder
// with the patterns as its .gitignore and the file made.
func TestGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	var paths bytes.Buffer
	for i, tc := range cases {
		dir := filepath.Join(root, fmt.Sprint("c", i))
		file := filepath.Join(dir, filepath.FromSlash(tc.path))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(file, nil, 0o644)
		os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(strings.Join(tc.pats, "\n")+"\n"), 0o644)
		fmt.Fprintf(&paths, "c%d/%s\n", i, tc.path)
	}
	git := func(stdin io.Reader, args ...string) []byte {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Stdin = root, stdin
		cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1", "HOME="+root, "XDG_CONFIG_HOME="+root)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git %s: %v", args, err)
		}
		return out
	}
	git(nil, "init", "-q")
	// -v -n: one line a path, "SOURCE:LINE:PATTERN\tPATH", "::\tPATH" for none.
	sc := bufio.NewScanner(bytes.NewReader(git(&paths, "check-ignore", "--no-index", "-v", "-n", "--stdin")))
	i := 0
	for ; sc.Scan(); i++ {
		how, path, _ := strings.Cut(sc.Text(), "\t")
		pat := how[strings.LastIndex(how, ":")+1:]
		ignored := pat != "" && !strings.HasPrefix(pat, "!")
		if tc := cases[i]; path != fmt.Sprintf("c%d/%s", i, tc.path) || ignored != tc.want {
			t.Errorf("%q: git says %q for %q, the case wants %v", tc.pats, how, path, tc.want)
		}
	}
	if i != len(cases) {
		t.Errorf("git answered %d of %d cases", i, len(cases))
	}
}

func TestMayEnter(t *testing.T) {
	s, _ := Compile([]string{"internal/*/testdata/**", "!cmd/", "/src"})
	for dir, want := range map[string]bool{"internal": true, "internal/x": true, "internal/x/testdata": true, "cmd": false, "internal/x/other": false, "src/a": true, "x/src": false} {
		if got := s.MayEnter(dir); got != want {
			t.Errorf("MayEnter(%q) = %v, want %v", dir, got, want)
		}
	}
}

func TestBad(t *testing.T) {
	for _, p := range []string{"", " ", "/", "!", "[", "a/[x", "[a-", "a//b", `\`, `x\`, "../x", "a/../b", "./x"} {
		if err := Check(p); err == nil {
			t.Errorf("%q compiled", p)
		}
	}
	if _, err := Compile([]string{"*.go", "src/[x"}); err == nil || err.Error() != `pattern "src/[x" is not a valid glob: syntax error in pattern` {
		t.Errorf("Compile = %v", err)
	}
	if err := Check("!x"); err != nil {
		t.Errorf("!x: %v", err)
	}
}
