package gate

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/cli"
)

// TestMarketplacePlugin: the plugin this repository's marketplace lists
// is what gate init --plugin writes, plus one launcher, the same file under
// each program's name, that finds the programs the project installed.
func TestMarketplacePlugin(t *testing.T) {
	committed := filepath.Join("..", "..", "plugins", "stopgate")
	dir := t.TempDir()
	var stderr bytes.Buffer
	env := &cli.Env{Args: []string{"init", "--plugin", dir}, Stdout: io.Discard, Stderr: &stderr, Dir: t.TempDir(),
		Getenv: func(string) string { return "" }}
	if code := cli.Run("gate", env, Run, Usage); code != 0 {
		t.Fatalf("gate init --plugin: exit %d: %s", code, stderr.String())
	}
	for _, rel := range []string{".claude-plugin/plugin.json", "hooks/hooks.json"} {
		want, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(committed, rel))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("plugins/stopgate/%s is not what gate init --plugin writes; run: rm -r plugins/stopgate/%s && go run ./cmd/gate init --plugin plugins/stopgate (and git checkout .claude/settings.json)\n%s", rel, rel, want)
		}
	}
	launcher, err := os.ReadFile(filepath.Join(committed, "bin", "gate"))
	if err != nil {
		t.Fatal(err)
	}
	for _, prog := range []string{"detect", "gate", "testhook"} {
		path := filepath.Join(committed, "bin", prog)
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(data, launcher) || !executable(path) {
			t.Errorf("plugins/stopgate/bin/%s is not the launcher, executable (%v)", prog, err)
		}
	}
	market, err := os.ReadFile(filepath.Join("..", "..", ".claude-plugin", "marketplace.json"))
	if err != nil || !strings.Contains(string(market), `"source": "./plugins/stopgate"`) {
		t.Errorf(".claude-plugin/marketplace.json does not list plugins/stopgate (%v)", err)
	}
}

// TestPluginLauncher runs the plugin's launcher as the client would: it
// runs the program the project installed, and with none it halts the
// Stop with the install command, never exit 127.
func TestPluginLauncher(t *testing.T) {
	launcher, err := filepath.Abs(filepath.Join("..", "..", "plugins", "stopgate", "bin"))
	if err != nil {
		t.Fatal(err)
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	gocache, err := exec.Command(gocmd, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	stubs := map[string]string{
		"":        "#!/bin/sh\necho \"$0 $*\"\n",
		"garbage": "\x7fELF\x02\x01\x01\x00garbage", // an ELF of no machine: exit 126
		"killed":  "#!/bin/sh\nkill -9 $$\n",
		"exit2":   "#!/bin/sh\necho block\nexit 2\n",
		// A project that pins stopgate with go.mod's tool directive, here a
		// local copy whose gate prints where it runs and exits 2, or one
		// that does not compile.
		"gomod":   "module example.com/p\n\ngo 1.24\n\nrequire github.com/stopgate/stopgate v0.0.0\n\nreplace github.com/stopgate/stopgate => ./sg\n\ntool github.com/stopgate/stopgate/cmd/gate\n",
		"sgmod":   "module github.com/stopgate/stopgate\n\ngo 1.24\n",
		"gate2":   "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\twd, _ := os.Getwd()\n\tfmt.Println(wd, os.Args[1:])\n\tos.Exit(2)\n}\n",
		"gatebad": "package main\n\nfunc main() { undefined() }\n",
		// A go whose build cache is a program (GOCACHEPROG): go tool -n
		// prints a path it has deleted already; and a go killed mid-build.
		"gonobin":  "#!/bin/sh\n[ \"$2\" = -n ] && { echo /nonexistent/b001/exe/$3; exit 0; }\necho \"go $*\"\nexit 2\n",
		"gokilled": "#!/bin/sh\nkill -9 $$\n",
	}
	goTool := []string{"go.mod=gomod", "sg/go.mod=sgmod"}
	codes := map[string]int{"exit 2 passes through": 2, "go tool, exit 2 passes through": 2, "detect killed": 128 + 9,
		"go tool, no binary kept": 2, "detect cannot run": 126}
	for _, tc := range []struct {
		name, prog, input string
		files             []string // stubs to create in the project
		want              string   // stdout
	}{
		{"npm", "gate", `{}`, []string{"node_modules/@stopgate/linux-x64/bin/gate", "bin/gate"}, "/node_modules/@stopgate/linux-x64/bin/gate --client x\n"},
		{"project bin", "detect", `{}`, []string{"bin/detect"}, "/bin/detect --client x\n"},
		{"none at Stop", "gate", `{"hook_event_name":"Stop"}`, nil, `{"continue":false,"stopReason":"stopgate is not installed in this project, so this stop cannot be checked: run npm install -D stopgate`},
		{"none at SubagentStop", "gate", `{"hook_event_name":"SubagentStop"}`, nil, ""},
		{"none for detect", "detect", `{"hook_event_name":"Stop"}`, nil, ""},
		// A program there that cannot start (126) is passed over, its input
		// unread; with no other, the stop halts and says so.
		{"cannot run, then another", "gate", `{}`, []string{"node_modules/@stopgate/linux-x64/bin/gate=garbage", "bin/gate"}, "/bin/gate --client x\n"},
		{"cannot run at Stop", "gate", `{"hook_event_name":"Stop"}`, []string{"bin/gate=garbage"}, `{"continue":false,"stopReason":"stopgate cannot run in this project (gate is there but does not start on this machine)`},
		{"killed at Stop", "gate", `{"hook_event_name":"Stop"}`, []string{"bin/gate=killed"}, `{"continue":false,"stopReason":"stopgate could not check this stop: gate was killed before it answered"}`},
		{"killed at SubagentStop", "gate", `{"hook_event_name":"SubagentStop"}`, []string{"bin/gate=killed"}, `{"continue":false`},
		// detect killed exits as killed: the registration then denies the
		// tool (PreToolUse) or halts (testhook at Stop), where exit 0 let it be.
		{"detect killed", "detect", `{"hook_event_name":"PreToolUse"}`, []string{"bin/detect=killed"}, ""},
		// detect there but unable to start exits so: the registration denies.
		{"detect cannot run", "detect", `{"hook_event_name":"PreToolUse"}`, []string{"bin/detect=garbage"}, ""},
		{"exit 2 passes through", "gate", `{}`, []string{"bin/gate=exit2"}, "block\n"},
		// go tool runs the gate in the module; a gate that does not build
		// is broken, never go's exit 1 passed on: that let the stop through.
		{"go tool, exit 2 passes through", "gate", `{}`, append(goTool, "sg/cmd/gate/main.go=gate2"), " [--client x]\n"},
		{"go tool, does not build, at Stop", "gate", `{"hook_event_name":"Stop"}`, append(goTool, "sg/cmd/gate/main.go=gatebad"),
			`{"continue":false,"stopReason":"stopgate cannot run in this project (go tool gate does not build here: go tool -n gate says why)`},
		// Built, but no binary left to run: go tool runs it, never "broken".
		{"go tool, no binary kept", "gate", `{}`, []string{"go.mod=gomod", "fakego/go=gonobin"}, "go tool gate --client x\n"},
		// go killed while it builds: killed, as a killed gate, not broken.
		{"go tool killed", "gate", `{"hook_event_name":"Stop"}`, []string{"go.mod=gomod", "fakego/go=gokilled"},
			`{"continue":false,"stopReason":"stopgate could not check this stop: go tool -n gate was killed before it answered"}`},
	} {
		dir := t.TempDir()
		for _, f := range tc.files {
			f, kind, _ := strings.Cut(f, "=")
			path := filepath.Join(dir, f)
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(stubs[kind]), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(filepath.Join(launcher, tc.prog), "--client", "x")
		path := "/usr/bin:/bin:" + filepath.Dir(gocmd)
		if _, err := os.Stat(filepath.Join(dir, "fakego")); err == nil {
			path = filepath.Join(dir, "fakego") + ":" + path
		}
		cmd.Env = []string{"CLAUDE_PROJECT_DIR=" + dir, "PATH=" + path,
			"GOCACHE=" + strings.TrimSpace(string(gocache)), "GOPATH=" + t.TempDir(), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod"}
		cmd.Stdin = strings.NewReader(tc.input)
		out, err := cmd.Output()
		if code := cmd.ProcessState.ExitCode(); code != codes[tc.name] {
			t.Errorf("%s: exit %d (%v), want %d", tc.name, code, err, codes[tc.name])
		}
		got := strings.ReplaceAll(string(out), dir, "")
		if tc.want == "" && got != "" || !strings.HasPrefix(got, tc.want) {
			t.Errorf("%s: stdout %q, want %q…", tc.name, got, tc.want)
		}
	}
}

// TestPluginKilledDetectDenies runs the plugin's PreToolUse command as the
// client would, with the project's detect killed by a signal (an agent's
// background pkill): the tool is denied, not let through unguarded.
func TestPluginKilledDetectDenies(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", "plugins", "stopgate"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "hooks", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var plugin struct {
		Hooks map[string][]struct{ Hooks []struct{ Command string } }
	}
	if err := json.Unmarshal(data, &plugin); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "bin"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "bin", "detect"), []byte("#!/bin/sh\nkill -9 $$\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", plugin.Hooks["PreToolUse"][0].Hooks[0].Command)
	cmd.Env = []string{"CLAUDE_PLUGIN_ROOT=" + root, "CLAUDE_PROJECT_DIR=" + dir, "PATH=/usr/bin:/bin"}
	cmd.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse","tool_name":"Write"}`)
	out, err := cmd.Output()
	if err != nil || !strings.Contains(string(out), `"permissionDecision":"deny"`) {
		t.Errorf("PreToolUse with detect killed: %v, stdout %q, want a deny", err, out)
	}
}
