package baseline

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestDiffTree(t *testing.T) {
	a, b := State{Exists: true, Sum: "a"}, State{Exists: true, Sum: "b"}
	bad := State{Err: "permission denied"}
	for _, tc := range []struct {
		name     string
		was, now map[string]State
		want     []string
	}{
		{"nothing changed", map[string]State{"x": a}, map[string]State{"x": a}, []string{}},
		{"edited", map[string]State{"x": a, "y": a}, map[string]State{"x": b, "y": a}, []string{"x"}},
		{"added", map[string]State{"x": a}, map[string]State{"x": a, "d/n": a}, []string{"d/n"}},
		{"deleted", map[string]State{"x": a, "y": a}, map[string]State{"y": a}, []string{"x"}},
		{"unreadable then", map[string]State{"x": bad}, map[string]State{"x": a}, []string{"x"}},
		{"unreadable both times: unknown, so changed", map[string]State{"x": bad}, map[string]State{"x": bad}, []string{"x"}},
		{"sorted", map[string]State{}, map[string]State{"b": a, "a": a}, []string{"a", "b"}},
	} {
		if got := diffTree(tc.was, tc.now); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A record with the tree lists what changed since; one without it, or
// none at all, is unknown (nil), never "nothing changed".
func TestChangedSince(t *testing.T) {
	root, dir := t.TempDir(), t.TempDir()
	state := filepath.Join(root, ".stopgate")
	for _, d := range []string{"docs", ".stopgate"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, root, "docs/a.md", "a\n")
	write(t, root, "main.go", "package main\n")
	write(t, root, ".stopgate/q.json", "{}")
	withTree, noTree := filepath.Join(dir, "tree"), filepath.Join(dir, "diff")
	if err := Take(root, Want{Tree: true}, []string{state}).Write(withTree, writeFile); err != nil {
		t.Fatal(err)
	}
	if err := Take(root, Want{Changed: []string{"main.go"}}, nil).Write(noTree, writeFile); err != nil {
		t.Fatal(err)
	}
	if got := ChangedSince(root, []string{withTree}, []string{state}); !slices.Equal(got[0], []string{}) {
		t.Fatalf("nothing changed: %q", got)
	}
	write(t, root, "docs/a.md", "b\n")
	write(t, root, "docs/new.md", "n\n")
	write(t, root, ".stopgate/q.json", "{\"x\":1}") // the state dir is not the work
	if err := os.Remove(filepath.Join(root, "main.go")); err != nil {
		t.Fatal(err)
	}
	got := ChangedSince(root, []string{withTree, noTree, filepath.Join(dir, "gone")}, []string{state})
	if want := []string{"docs/a.md", "docs/new.md", "main.go"}; !slices.Equal(got[0], want) {
		t.Errorf("changed: %q, want %q", got[0], want)
	}
	if got[1] != nil || got[2] != nil {
		t.Errorf("no tree recorded: %q, want unknown (nil)", got[1:])
	}
}

// TestTreeStampRestoredMtime edits a file and puts its modification time
// back, as an agent hiding a change from when_changed would: the record of
// the whole tree still shows it (the change time moved), without a read.
func TestTreeStampRestoredMtime(t *testing.T) {
	root := t.TempDir()
	file := filepath.Join(root, "main.go")
	if err := os.WriteFile(file, []byte("package main // v1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	was := tree(root, nil)
	if was == nil {
		t.Fatal("no tree")
	}
	if err := os.WriteFile(file, []byte("package main // v2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(file, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	now := tree(root, nil)
	if now == nil {
		t.Fatal("no tree")
	}
	if got := diffTree(was, now); !slices.Equal(got, []string{"main.go"}) {
		t.Errorf("diffTree after an edit with its mtime restored = %q, want [main.go]", got)
	}
}
