//go:build unix

package baseline

import (
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// A named pipe under a test's name is not opened (it would wait for a
// writer): the check cannot judge it, and says so.
func TestJudgeNamedPipe(t *testing.T) {
	root := t.TempDir()
	rec := filepath.Join(t.TempDir(), "rec")
	c := compiled(&Check{In: []string{"*_test.go"}, Lacks: regexp.MustCompile(`x`)})
	Take(root, Want{In: c.In}, nil).Write(rec, writeFile)
	if err := syscall.Mkfifo(filepath.Join(root, "p_test.go"), 0o644); err != nil {
		t.Fatal(err)
	}
	if v := c.Judge(root, []string{rec}, nil); !strings.Contains(v.Problem, "p_test.go: not a regular file") {
		t.Fatalf("%+v", v)
	}
}
