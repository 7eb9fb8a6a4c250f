package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/bench"
)

// TestGoInstallAndTool: from a module proxy serving this repository's HEAD
// (no network), go install …/cmd/...@VERSION installs the programs, and in
// a Go module go get -tool adds them and go tool gate runs.
func TestGoInstallAndTool(t *testing.T) {
	src := gitRoot(t)
	const version = "v0.99.0"
	gocmd := "go" // the one on PATH, as make runs it
	tmp := t.TempDir()
	proxy := filepath.Join(tmp, "proxy")
	if err := bench.ModuleProxy(src, "HEAD", version, proxy); err != nil {
		t.Fatal(err)
	}
	env, err := bench.ProxyEnv(gocmd, proxy, filepath.Join(tmp, "modcache"))
	if err != nil {
		t.Fatal(err)
	}
	// Without -trimpath every package from this fresh module cache is
	// cached under its temporary folder: 160 MB more build cache a run.
	env = append(env, "GOFLAGS=-mod=mod -trimpath")
	gobin := filepath.Join(tmp, "gobin")
	scratch := filepath.Join(tmp, "scratch")
	os.MkdirAll(scratch, 0o755)
	run := func(dir string, extra []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		cmd.Env = append(env, extra...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	defer run(tmp, nil, gocmd, "clean", "-modcache") // its files are read-only

	run(tmp, []string{"GOBIN=" + gobin}, gocmd, "install", bench.Module+"/cmd/...@"+version)
	for _, prog := range []string{"detect", "gate", "gate-otel", "testhook"} {
		if out := run(tmp, nil, filepath.Join(gobin, prog), "--version"); !strings.HasPrefix(out, prog+" "+version+" ") {
			t.Errorf("go install: %s --version: %q", prog, out)
		}
	}

	run(scratch, nil, gocmd, "mod", "init", "example.com/scratch")
	run(scratch, nil, gocmd, "get", "-tool", bench.Module+"/cmd/...@"+version)
	if out := run(scratch, nil, gocmd, "tool", "gate", "--version"); !strings.HasPrefix(out, "gate "+version+" ") {
		t.Errorf("go tool gate --version: %q", out)
	}
	if mod, _ := os.ReadFile(filepath.Join(scratch, "go.mod")); !strings.Contains(string(mod), "tool "+bench.Module+"/cmd/gate") &&
		!strings.Contains(string(mod), "\t"+bench.Module+"/cmd/gate") {
		t.Errorf("go.mod has no tool directive for gate:\n%s", mod)
	}
}
