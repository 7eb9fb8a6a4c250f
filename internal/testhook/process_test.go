package testhook

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stopgate/stopgate/internal/cli"
)

// TestMain lets the test binary be testhook: the multi-process tests
// re-exec it with TESTHOOK_CHILD set, so each child is a real process with
// its own file descriptors and locks.
func TestMain(m *testing.M) {
	if os.Getenv("TESTHOOK_CHILD") == "1" {
		cli.Main("testhook", Run, Usage)
	}
	os.Exit(m.Run())
}

// testhook runs the test binary as testhook in dir.
func testhook(dir string, stdin string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "TESTHOOK_CHILD=1", "CLAUDE_PROJECT_DIR="+dir, "STOPGATE_SESSION_ID=")
	cmd.Stdin = strings.NewReader(stdin)
	return cmd
}

// writeSuite writes a suite of n tests that each expect "ok".
func writeSuite(t testing.TB, dir string, n int) {
	t.Helper()
	var tests []string
	for i := range n {
		tests = append(tests, fmt.Sprintf(`{"id": "t%02d", "category": "c%d", "action": "say ok %d", "expect": [{"contains": "ok"}]}`, i, i%3, i))
	}
	path := filepath.Join(dir, DefaultJSONFile)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	data := `{"version": "1", "tests": [` + strings.Join(tests, ",\n") + "]}"
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Many processes recording results at once, in two sessions, lose
// nothing: each records exactly one test, every test is recorded once, and
// the sessions do not see each other's results.
func TestConcurrentProcessesLoseNoResult(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	const n = 40
	dir := t.TempDir()
	writeSuite(t, dir, n)
	for _, s := range []string{"s1", "s2"} {
		if out, err := testhook(dir, "", "init", "--session", s).CombinedOutput(); err != nil {
			t.Fatalf("init %s: %v\n%s", s, err, out)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan string, 2*n)
	for i := range 2 * n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			session := []string{"s1", "s2"}[i%2]
			verb := "validate"
			if i%4 == 1 {
				verb = "skip"
			}
			args := []string{verb, "--session", session}
			if verb == "validate" {
				args = append(args, "ok")
			}
			if out, err := testhook(dir, "", args...).CombinedOutput(); err != nil {
				errs <- fmt.Sprintf("%s: %v\n%s", args, err, out)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	stateDir := filepath.Join(dir, "tmp/validation")
	for _, s := range []string{"s1", "s2"} {
		st, err := loadRun(runFile(stateDir, s))
		if err != nil || st == nil {
			t.Fatalf("load %s: %v %v", s, st, err)
		}
		c := st.counts()
		if st.Mode != Completed || c.NotRun != 0 || c.Failed != 0 || c.Passed+c.Skipped != n {
			t.Errorf("%s: mode %s, %s", s, st.Mode, c)
		}
		for i, tries := range st.Tries {
			if tries != 1 {
				t.Errorf("%s: test %s recorded %d times", s, st.Tests[i].ID, tries)
			}
		}
		// Even i went to s1, all validates; odd i to s2, every other one a skip.
		if s == "s2" && c.Skipped != n/2 || s == "s1" && c.Skipped != 0 {
			t.Errorf("%s: %d skipped: the sessions' commands crossed", s, c.Skipped)
		}
	}
	var stderr bytes.Buffer
	cmd := testhook(dir, "", "status")
	cmd.Stderr = &stderr
	if cmd.Run() == nil || !strings.Contains(stderr.String(), "2 sessions have a run: s1, s2") {
		t.Errorf("status without a session: %q", stderr.String())
	}
}
