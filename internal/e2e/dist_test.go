package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"debug/elf"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/dist"
)

// TestReproducible: make dist (internal/dist) builds this platform's release of HEAD twice, each from
// its own clone, and requires the same bytes in every file: archives, npm
// packages, SHA256SUMS. make dist builds every platform the same way.
func TestReproducible(t *testing.T) {
	src := gitRoot(t)
	gocmd := "go" // the one on PATH, as make runs it
	p := runtime.GOOS + "/" + runtime.GOARCH
	var outs []string
	for i := range 2 {
		out := filepath.Join(t.TempDir(), "dist")
		var log bytes.Buffer
		if err := dist.Build(dist.Options{Go: gocmd, Src: src, Out: out, Platforms: []string{p}, Log: &log}); err != nil {
			t.Fatalf("build %d: %v\n%s", i+1, err, log.String())
		}
		outs = append(outs, out)
	}
	a, b := tree(t, outs[0]), tree(t, outs[1])
	if len(a) != 4 { // archive, two npm packages, sums
		t.Fatalf("release files: %v", keys(a))
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs between two builds of one commit", name)
		}
	}
	if len(b) != len(a) {
		t.Errorf("second build has other files: %v vs %v", keys(b), keys(a))
	}
	sums := exec.Command("sha256sum", "-c", "SHA256SUMS")
	sums.Dir = outs[0]
	if out, err := sums.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c: %v\n%s", err, out)
	}
	for name, data := range a {
		if strings.HasSuffix(name, ".tar.gz") {
			checkArchive(t, name, data)
		}
	}
}

// checkArchive requires members owned by root, in order, and programs that
// run without a dynamic loader.
func checkArchive(t *testing.T, name string, data []byte) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, filepath.Base(h.Name))
		if h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Mode != 0o755 {
			t.Errorf("%s: %s: owner %d:%d %q, mode %o", name, h.Name, h.Uid, h.Gid, h.Uname, h.Mode)
		}
		body, _ := io.ReadAll(tr)
		if f, err := elf.NewFile(bytes.NewReader(body)); err == nil {
			for _, prog := range f.Progs {
				if prog.Type == elf.PT_INTERP {
					t.Errorf("%s: %s is linked dynamically", name, h.Name)
				}
			}
		}
	}
	if strings.Join(names, " ") != "detect gate gate-otel testhook" {
		t.Errorf("%s: members %v", name, names)
	}
}

func tree(t *testing.T, dir string) map[string][]byte {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// gitRoot is the module root, skipping t where it is not a git checkout.
// The tests that build from it are here, not beside internal/dist: they
// read HEAD, which the test cache does not track, and they load the
// machine as the other end-to-end suites do.
func gitRoot(t *testing.T) string {
	root := Root(t)
	if out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").CombinedOutput(); err != nil {
		t.Skipf("not a git checkout: %v: %s", err, out)
	}
	return root
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
