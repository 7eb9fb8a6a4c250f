package baseline

import "testing"

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern, path string
		match         bool
	}{
		{"**/*_test.go", "a_test.go", true},
		{"**/*_test.go", "internal/x/a_test.go", true},
		{"**/*_test.go", "internal/x/a.go", false},
		{"*_test.go", "deep/down/a_test.go", true}, // no slash: any depth
		{"/*_test.go", "deep/a_test.go", false},    // anchored
		{"/*_test.go", "a_test.go", true},
		{"tests/", "tests/unit/test_a.py", true},
		{"tests/", "src/tests/a.py", false},
		{"src/**/*.py", "src/a.py", true},
		{"src/**/*.py", "src/x/y/a.py", true},
		{"src/*.py", "src/x/a.py", false},
		{"te?t/[ab].go", "test/a.go", true},
		{"te?t/[ab].go", "test/c.go", false},
	}
	for _, tt := range tests {
		g, err := CompileGlob(tt.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.Match(tt.path); got != tt.match {
			t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.path, got, tt.match)
		}
	}
	for _, bad := range []string{"", "!x", "../x", "a/../b", "[a-", "x\\"} {
		if _, err := CompileGlob(bad); err == nil {
			t.Errorf("%q compiled", bad)
		}
	}
}

func TestGlobEnter(t *testing.T) {
	g, _ := CompileGlob("internal/*/testdata/**")
	for dir, want := range map[string]bool{"internal": true, "internal/x": true, "internal/x/testdata": true, "cmd": false, "internal/x/other": false} {
		if got := g.mayEnter(dir); got != want {
			t.Errorf("mayEnter(%q) = %v, want %v", dir, got, want)
		}
	}
}
