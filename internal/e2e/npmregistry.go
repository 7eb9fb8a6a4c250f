package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha1"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/dist"
)

// NpmRegistry serves the npm packages in tarballs (as make dist writes
// them) on loopback, for the test's life, as the registry serves them once
// published: a document per package name, each version's manifest with its
// tarball's address and integrity. `npm install stopgate` against it
// (npm_config_registry) records in package.json what a published release
// gives, and npm picks the platform package by its os and cpu. A name it
// does not hold (another platform's package) is not found.
func NpmRegistry(t *testing.T, tarballs []string) string {
	t.Helper()
	mux := http.NewServeMux()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	docs := map[string]map[string]any{}
	for _, path := range tarballs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		manifest, err := tarballManifest(data)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		name, _ := manifest["name"].(string)
		version, _ := manifest["version"].(string)
		file := "/" + name + "/-/" + filepath.Base(path)
		sum1, sum512 := sha1.Sum(data), sha512.Sum512(data)
		manifest["dist"] = map[string]string{"tarball": srv.URL + file, "shasum": hex.EncodeToString(sum1[:]),
			"integrity": "sha512-" + base64.StdEncoding.EncodeToString(sum512[:])}
		if docs[name] == nil {
			docs[name] = map[string]any{"name": name, "dist-tags": map[string]string{"latest": version}, "versions": map[string]any{}}
		}
		docs[name]["versions"].(map[string]any)[version] = manifest
		mux.HandleFunc(file, func(w http.ResponseWriter, _ *http.Request) { w.Write(data) })
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		doc, ok := docs[strings.TrimPrefix(r.URL.Path, "/")] // a scoped name comes as /@scope%2fname
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(doc)
	})
	return srv.URL
}

// tarballManifest returns the package.json of an npm tarball.
func tarballManifest(data []byte) (map[string]any, error) {
	zr, err := gzip.NewReader(strings.NewReader(string(data)))
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			if err == io.EOF {
				err = errors.New("no package/package.json")
			}
			return nil, err
		}
		if h.Name == "package/package.json" {
			var m map[string]any
			err := json.NewDecoder(tr).Decode(&m)
			return m, err
		}
	}
}

// NpmPackages builds this platform's npm packages of HEAD the way make dist
// does (dist.Build) and returns their two tarballs.
func NpmPackages(t *testing.T) []string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "dist")
	var log bytes.Buffer
	if err := dist.Build(dist.Options{Go: "go", Src: Root(t), Out: out, Platforms: []string{runtime.GOOS + "/" + runtime.GOARCH}, Log: &log}); err != nil {
		t.Fatalf("dist: %v\n%s", err, log.String())
	}
	tarballs, _ := filepath.Glob(filepath.Join(out, "npm", "*.tgz"))
	if len(tarballs) != 2 {
		t.Fatalf("npm tarballs: %v", tarballs)
	}
	return tarballs
}
