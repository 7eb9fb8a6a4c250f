package gate

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// pluginCopy is a copy of the marketplace plugin in a folder of the
// test's, its launchers' folder returned: they keep go.mod's tool in the
// plugin's folder.
func pluginCopy(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "stopgate")
	for _, rel := range []string{"bin/detect", "bin/gate", "bin/testhook", "hooks/hooks.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "plugins", "stopgate", rel))
		if err == nil {
			os.MkdirAll(filepath.Join(root, filepath.Dir(rel)), 0o755)
			err = os.WriteFile(filepath.Join(root, rel), data, 0o755)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(root, "bin")
}

// TestPluginGoToolKept: the plugin's search for go.mod's tool (go tool -n,
// go version -m, awk: a dozen programs) runs once, not on every event.
// The program it found published is kept in the plugin's folder, and the
// hooks' command runs it first, with no program on PATH at all. Once
// go.mod has changed (here the agent's replace) the copy does not run:
// the script searches again, and the stop halts as it did.
func TestPluginGoToolKept(t *testing.T) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Dir(pluginCopy(t))
	data, err := os.ReadFile(filepath.Join(root, "hooks", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct{ Hooks []struct{ Command string } }
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Hooks["Stop"]) == 0 || len(doc.Hooks["PostToolUse"]) == 0 {
		t.Fatalf("hooks.json: no Stop or PostToolUse command (%v)", err)
	}
	stop := doc.Hooks["Stop"][0].Hooks[0].Command // the gate's
	read := doc.Hooks["PostToolUse"][0].Hooks[0].Command
	dir := filepath.Join(t.TempDir(), "p")
	os.Mkdir(dir, 0o755)
	publishedModule(t, dir, gocmd)
	goRun(t, dir, gocmd, "get", "-tool", "github.com/stopgate/stopgate/cmd/detect@v0.0.1")
	withGo := "/usr/bin:/bin:" + filepath.Dir(gocmd)
	var stderr strings.Builder
	run := func(project, path string, command ...string) (string, int) {
		t.Helper()
		cmd := exec.Command("/bin/sh", "-c", stop)
		if len(command) > 0 {
			cmd.Args[2] = command[0]
		}
		stderr.Reset()
		cmd.Stderr = &stderr
		cmd.Dir = project // the session's folder, where the client runs hooks
		cmd.Env = append(goEnv(dir), "CLAUDE_PLUGIN_ROOT="+root, "CLAUDE_PROJECT_DIR="+project, "PATH="+path, "GOCACHE="+goCache(t, gocmd))
		cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop","stop_hook_active":false}`)
		out, _ := cmd.Output()
		return string(out), cmd.ProcessState.ExitCode()
	}
	ran := dir + " [--timeout 600]\n"
	if out, code := run(dir, withGo); out != ran || code != 2 {
		t.Fatalf("the first stop: exit %d, stdout %q, want the published gate's %q", code, out, ran)
	}
	if out, code := run(dir, "/nonexistent"); out != ran || code != 2 {
		t.Errorf("the next stop, no program on PATH: exit %d, stdout %q, want the kept gate's %q", code, out, ran)
	}
	other := filepath.Join(t.TempDir(), "p")
	os.Mkdir(other, 0o755)
	notInstalled := `{"continue":false,"stopReason":"stopgate is not installed in this project`
	if out, _ := run(other, "/nonexistent"); !strings.HasPrefix(out, notInstalled) {
		t.Errorf("another project: stdout %q, want %q…", out, notInstalled)
	}
	// The kept gate, stopgate's own, runs until go.mod changes; then it
	// runs the script, the input unread (cli.Main), which searches again.
	for _, prog := range []string{"gate", "detect"} {
		build := exec.Command(gocmd, "build", "-o", filepath.Join(root, "cache", dir, prog), "github.com/stopgate/stopgate/cmd/"+prog)
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
	}
	if out, code := run(dir, "/nonexistent"); strings.Contains(out, "go tool") || code == 126 {
		t.Fatalf("the kept stopgate gate: exit %d, stdout %q", code, out)
	}
	evil := map[string]string{"evil/go.mod": "module github.com/stopgate/stopgate\n\ngo 1.24\n", "evil/cmd/gate/main.go": "package main\n\nfunc main() {}\n", "evil/cmd/detect/main.go": "package main\n\nfunc main() {}\n"}
	for name, text := range evil {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	mod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	os.WriteFile(filepath.Join(dir, "go.mod"), append(mod, "replace github.com/stopgate/stopgate => ./evil\n"...), 0o644)
	later := time.Now().Add(time.Minute)
	os.Chtimes(filepath.Join(dir, "go.mod"), later, later)
	want := `{"continue":false,"stopReason":"stopgate cannot run in this project (go.mod's go tool gate is not stopgate as published`
	if out, _ := run(dir, withGo); !strings.HasPrefix(out, want) {
		t.Errorf("go.mod changed since: stdout %q, want %q…", out, want)
	}
	// The Read hook execs the kept detect (no next candidate to fall to):
	// it still hands over to the script, which says why it cannot run.
	if out, code := run(dir, withGo, read); code != 126 || out != "" || !strings.Contains(stderr.String(), "go tool detect is not stopgate as published") {
		t.Errorf("go.mod changed since, a Read: exit %d, stdout %q, stderr %q; want the script's 126 and why", code, out, stderr.String())
	}
}
