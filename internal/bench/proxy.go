package bench

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Module is stopgate's module path. ModuleProxy and ProxyEnv serve it to
// the go.mod tool routes of make bench and of the end-to-end tests.
const Module = "github.com/stopgate/stopgate"

// ModuleProxy writes in dir a Go module proxy (GOPROXY=file://dir) that
// serves the commit rev of the repository src as Module@version, so
// `go install Module/cmd/...@version` and `go get -tool` run with no
// network. The module's dependencies come from a second file proxy: the
// module cache's download directory.
func ModuleProxy(src, rev, version, dir string) error {
	cmd := exec.Command("git", "archive", "--format=tar", rev)
	cmd.Dir = src
	var archive bytes.Buffer
	cmd.Stdout = &archive
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("git archive %s: %w", rev, err)
	}
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	var gomod []byte
	tr := tar.NewReader(&archive)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue // a module zip holds files only
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return err
		}
		if h.Name == "go.mod" {
			gomod = data
		}
		w, err := zw.Create(Module + "@" + version + "/" + h.Name)
		if err != nil {
			return err
		}
		w.Write(data)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	at := filepath.Join(dir, filepath.FromSlash(Module), "@v")
	if err := os.MkdirAll(at, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{
		"list":            []byte(version + "\n"),
		version + ".info": []byte(`{"Version":"` + version + `"}` + "\n"),
		version + ".mod":  gomod,
		version + ".zip":  zipped.Bytes(),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(at, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// ProxyEnv is the environment of a go command that fetches only from the
// proxy dir (ModuleProxy) and the module cache's downloads, into its own
// module cache modcache, without checksum database or network.
func ProxyEnv(gocmd, dir, modcache string) ([]string, error) {
	out, err := exec.Command(gocmd, "env", "GOMODCACHE").Output()
	if err != nil {
		return nil, fmt.Errorf("go env GOMODCACHE: %w", err)
	}
	downloads := filepath.Join(strings.TrimSpace(string(out)), "cache", "download")
	return append(os.Environ(),
		"GOPROXY=file://"+filepath.ToSlash(dir)+",file://"+filepath.ToSlash(downloads),
		"GOMODCACHE="+modcache, "GOSUMDB=off", "GONOSUMDB="+Module, "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOWORK=off"), nil
}
