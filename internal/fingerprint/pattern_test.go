package fingerprint

import "testing"

func TestPatterns(t *testing.T) {
	for _, tc := range []struct {
		pats []string
		path string
		want bool
	}{
		{[]string{"*.go"}, "main.go", true},
		{[]string{"*.go"}, "internal/x/y.go", true},
		{[]string{"*.go"}, "go.mod", false},
		{[]string{"**/*.go"}, "a/b/c.go", true},
		{[]string{"**/*.go"}, "c.go", true},
		{[]string{"/go.mod"}, "go.mod", true},
		{[]string{"/go.mod"}, "sub/go.mod", false},
		{[]string{"go.mod"}, "sub/go.mod", true},
		{[]string{"src/*.c"}, "src/a.c", true},
		{[]string{"src/*.c"}, "src/x/a.c", false},
		{[]string{"src/"}, "src/x/a.c", true},
		{[]string{"src/"}, "src", false},
		{[]string{"src"}, "src", true},
		{[]string{"docs"}, "a/docs/x.md", true},
		{[]string{"a/**/z"}, "a/z", true},
		{[]string{"a/**/z"}, "a/b/c/z", true},
		{[]string{"a/**"}, "a/b/c", true},
		{[]string{"*.go", "!*_test.go"}, "x_test.go", false},
		{[]string{"*.go", "!*_test.go"}, "x.go", true},
		{[]string{"*.go", "!*_test.go", "keep_test.go"}, "keep_test.go", true},
		{[]string{"[ab].txt"}, "b.txt", true},
	} {
		ps, err := Compile(tc.pats)
		if err != nil {
			t.Fatalf("%q: %v", tc.pats, err)
		}
		if got := ps.Match(tc.path); got != tc.want {
			t.Errorf("%q match %q = %v, want %v", tc.pats, tc.path, got, tc.want)
		}
	}
}

func TestBadPatterns(t *testing.T) {
	for _, p := range []string{"", "/", "!", "[", "a/[x", "a//b", `\`} {
		if _, err := Compile([]string{p}); err == nil {
			t.Errorf("%q compiled", p)
		}
	}
}
