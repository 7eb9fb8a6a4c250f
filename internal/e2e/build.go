package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var build struct {
	once    sync.Once
	dir     string
	wrapper string // the capture-then-exec binary, in a directory of its own
	err     error
}

// Stopgate returns a directory holding the stopgate commands (./cmd/...) built from the
// module's source by this test binary, so a scenario never runs a stale build; the
// capturing Wrapper is built with them. The build happens once per test binary; Main
// removes it.
func Stopgate(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		build.dir, build.err = os.MkdirTemp("", "stopgate-e2e-bin-")
		if build.err != nil {
			return
		}
		cmd := exec.Command("go", "build", "-tags", "osusergo,netgo", "-o", build.dir+string(os.PathSeparator), "./cmd/...")
		cmd.Dir = Root(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./cmd/...: %v\n%s", err, out)
			return
		}
		build.wrapper = filepath.Join(build.dir+"-wrapper", filepath.Base(Wrapper))
		cmd = exec.Command("go", "build", "-o", build.wrapper, "./internal/e2e/capture-then-exec")
		cmd.Dir = Root(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./internal/e2e/capture-then-exec: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatalf("e2e: %v", build.err)
	}
	return build.dir
}

// Main runs the tests and then removes what Stopgate built. Call it from TestMain:
//
//	func TestMain(m *testing.M) { os.Exit(e2e.Main(m)) }
func Main(m *testing.M) int {
	code := m.Run()
	if build.dir != "" {
		os.RemoveAll(build.dir)
		os.RemoveAll(build.dir + "-wrapper")
	}
	return code
}
