package baseline

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/pattern"
)

// A file over the caps is recorded by its hash alone: unchanged, it is
// judged (no line added); changed, the check cannot judge and says so.
func TestJudgeOverCap(t *testing.T) {
	root := t.TempDir()
	big := strings.Repeat("func TestBig(t *testing.T) {}\n", maxText/30+10)
	write(t, root, "big_test.go", big)
	write(t, root, "small_test.go", "package x\n")
	c := compiled(&Check{In: []string{"**/*_test.go"}, Lacks: regexp.MustCompile(`t\.Skip\(`)})
	rec := filepath.Join(t.TempDir(), "rec")
	if err := Take(root, Want{In: c.In}, nil).Write(rec, writeFile); err != nil {
		t.Fatal(err)
	}
	if v := c.Judge(root, []string{rec}, nil); v.Problem != "" || len(v.Fails) != 0 {
		t.Fatalf("unchanged: %+v", v)
	}
	write(t, root, "small_test.go", "package x\nfunc TestS(t *testing.T) { t.Skip(\"x\") }\n")
	if v := c.Judge(root, []string{rec}, nil); len(v.Fails) != 1 || !strings.HasPrefix(v.Fails[0], "small_test.go:2: added line matches") {
		t.Fatalf("skip added: %+v", v)
	}
	write(t, root, "big_test.go", big+"// more\n")
	v := c.Judge(root, []string{rec}, nil)
	if !strings.Contains(v.Problem, "could not judge: big_test.go changed and was too large to record") {
		t.Fatalf("big changed: %+v", v)
	}
}

// Globs the record does not hold (mappings.toml changed since) cannot be
// judged: the record cannot say which files existed.
func TestJudgeGlobNotRecorded(t *testing.T) {
	root := t.TempDir()
	rec := filepath.Join(t.TempDir(), "rec")
	Take(root, Want{In: []string{"*.go"}}, nil).Write(rec, writeFile)
	c := compiled(&Check{In: []string{"*.py"}, Matches: regexp.MustCompile(`def test_`)})
	if v := c.Judge(root, []string{rec}, nil); !strings.Contains(v.Problem, "files matching *.py were not recorded") {
		t.Fatalf("%+v", v)
	}
}

// A "!" in in takes files back: the record holds what the patterns that
// select name (a superset), and the check looks at what the whole list
// selects.
func TestJudgeNegation(t *testing.T) {
	root := t.TempDir()
	os.Mkdir(filepath.Join(root, "gen"), 0o755)
	write(t, root, "a.go", "package a\n")
	write(t, root, "gen/g.go", "package gen\n")
	c := compiled(&Check{In: []string{"*.go", "!gen/**"}, Lacks: regexp.MustCompile(`t\.Skip\(`)})
	rec := filepath.Join(t.TempDir(), "rec")
	s := Take(root, Want{In: c.In}, nil)
	if strings.Join(s.In, ",") != "*.go" || len(s.Files) != 2 {
		t.Fatalf("record: in %q, %d files", s.In, len(s.Files))
	}
	s.Write(rec, writeFile)
	write(t, root, "gen/g.go", "package gen\nt.Skip(\"x\")\n")
	if v := c.Judge(root, []string{rec}, nil); v.Problem != "" || len(v.Fails) != 0 {
		t.Fatalf("taken back: %+v", v)
	}
	write(t, root, "a.go", "package a\nt.Skip(\"x\")\n")
	if v := c.Judge(root, []string{rec}, nil); v.Problem != "" || len(v.Fails) != 1 || !strings.HasPrefix(v.Fails[0], "a.go:2:") {
		t.Fatalf("selected: %+v", v)
	}
}

func write(t *testing.T, root, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func writeFile(path string, data []byte) error { return os.WriteFile(path, data, 0o644) }

// Write stores s at path through write.
func (s *Snapshot) Write(path string, write func(string, []byte) error) error {
	data, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return write(path, data)
}

// compiled sets c.Set from c.In, as config does.
func compiled(c *Check) *Check {
	set, err := pattern.Compile(c.In)
	if err != nil {
		panic(err)
	}
	c.Set = set
	return c
}

// A check whose in patterns were never compiled judges nothing: it cannot
// list the files added_lacks looks at, and listing none would pass.
func TestJudgeUncompiledIn(t *testing.T) {
	c := &Check{In: []string{"*_test.go"}, Lacks: regexp.MustCompile(`t\.Skip`)}
	if v := c.Judge(t.TempDir(), []string{"{}"}, nil); !strings.Contains(v.Problem, "could not judge") {
		t.Errorf("verdict %+v, want could not judge", v)
	}
}

// Scan is handed every file of in that changed, with its text then and
// now: edited, added, deleted (not taken back by a "!"), and a file
// swapped for a link to nothing reads as deleted.
func TestJudgeScan(t *testing.T) {
	root := t.TempDir()
	write(t, root, "a_test.go", "a\n")
	write(t, root, "b_test.go", "b\n")
	write(t, root, "c_test.go", "c\n")
	write(t, root, "d_test.go", "d\n")
	write(t, root, "same_test.go", "s\n")
	write(t, root, "gone_test.go", "g\n")
	var got []Change
	c := compiled(&Check{In: []string{"*_test.go", "!gone_test.go"}, Scan: func(cs []Change) []string {
		got = cs
		return []string{"finding"}
	}})
	rec := filepath.Join(t.TempDir(), "rec")
	Take(root, Want{In: c.In}, nil).Write(rec, writeFile)
	write(t, root, "a_test.go", "a2\n")
	write(t, root, "new_test.go", "n\n")
	os.Remove(filepath.Join(root, "b_test.go"))
	os.Remove(filepath.Join(root, "c_test.go"))
	os.Symlink("nowhere", filepath.Join(root, "c_test.go"))
	os.Remove(filepath.Join(root, "gone_test.go"))
	v := c.Judge(root, []string{rec}, nil)
	if v.Problem != "" || len(v.Fails) != 1 || v.Fails[0] != "finding" {
		t.Fatalf("%+v", v)
	}
	want := []Change{
		{Path: "a_test.go", Was: []byte("a\n"), Now: []byte("a2\n"), Existed: true, Exists: true},
		{Path: "b_test.go", Was: []byte("b\n"), Existed: true},
		{Path: "c_test.go", Was: []byte("c\n"), Existed: true},
		{Path: "new_test.go", Now: []byte("n\n"), Exists: true},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Scan got\n%+v\nwant\n%+v", got, want)
	}
}
