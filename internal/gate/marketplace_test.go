package gate

import (
	"archive/zip"
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
	launcher := pluginCopy(t)
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	gocache := goCache(t, gocmd)
	stubs := map[string]string{
		"":        "#!/bin/sh\necho \"$0 $*\"\n",
		"garbage": "\x7fELF\x02\x01\x01\x00garbage", // an ELF of no machine: exit 126
		"killed":  "#!/bin/sh\nkill -9 $$\n",
		"exit2":   "#!/bin/sh\necho block\nexit 2\n",
		"path":    "#!/bin/sh\necho \"PATH=$PATH\"\n",
		// A project that pins stopgate with go.mod's tool directive, here a
		// local copy whose gate prints where it runs and exits 2, or one
		// that does not compile.
		"gomod":   "module example.com/p\n\ngo 1.24\n\nrequire github.com/stopgate/stopgate v0.0.0\n\nreplace github.com/stopgate/stopgate => ./sg\n\ntool github.com/stopgate/stopgate/cmd/gate\n",
		"sgmod":   "module github.com/stopgate/stopgate\n\ngo 1.24\n",
		"gate2":   "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\twd, _ := os.Getwd()\n\tfmt.Println(wd, os.Args[1:])\n\tos.Exit(2)\n}\n",
		"gatebad": "package main\n\nfunc main() { undefined() }\n",
		// A go whose build cache is a program (GOCACHEPROG): go tool -n
		// prints a path it has deleted already; and a go killed mid-build.
		// go list says what it builds from: stopgate's module as published.
		"gonobin":  "#!/bin/sh\n[ \"$2\" = -n ] && { echo /nonexistent/b001/exe/$3; exit 0; }\n[ \"$1\" = list ] && { printf 'path github.com/stopgate/stopgate/cmd/gate\\nmod github.com/stopgate/stopgate v0.0.1 h1:x\\n'; exit 0; }\necho \"go $*\"\nexit 2\n",
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
		// Found before the search makes PATH safe, it still runs with PATH
		// as the client gave it.
		{"project bin, PATH as given", "detect", `{}`, []string{"bin/detect=path"}, "PATH=/usr/bin:/bin:"},
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
		{"go tool, exit 2 passes through", "gate", `{}`, []string{"go.mod=published"}, " [--client x]\n"},
		{"go tool, does not build, at Stop", "gate", `{"hook_event_name":"Stop"}`, append(goTool, "sg/cmd/gate/main.go=gatebad"),
			`{"continue":false,"stopReason":"stopgate cannot run in this project (go tool gate does not build here: go tool -n gate says why)`},
		// Built, but no binary left to run: go tool runs it, never "broken".
		{"go tool, no binary kept", "gate", `{}`, []string{"go.mod=gomod", "../fakego/go=gonobin"}, "go tool gate --client x\n"},
		// go killed while it builds: killed, as a killed gate, not broken.
		{"go tool killed", "gate", `{"hook_event_name":"Stop"}`, []string{"go.mod=gomod", "../fakego/go=gokilled"},
			`{"continue":false,"stopReason":"stopgate could not check this stop: go tool -n gate was killed before it answered"}`},
	} {
		// The fake go is outside the project, on PATH: the launcher takes no
		// program from the project's folders but its own search's.
		dir := filepath.Join(t.TempDir(), "p")
		os.Mkdir(dir, 0o755)
		for _, f := range tc.files {
			f, kind, _ := strings.Cut(f, "=")
			if kind == "published" {
				publishedModule(t, dir, gocmd)
				continue
			}
			path := filepath.Join(dir, f)
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(stubs[kind]), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd := exec.Command(filepath.Join(launcher, tc.prog), "--client", "x")
		path := "/usr/bin:/bin:" + filepath.Dir(gocmd)
		if _, err := os.Stat(filepath.Join(dir, "..", "fakego")); err == nil {
			path = filepath.Join(dir, "..", "fakego") + ":" + path
		}
		cmd.Env = append(goEnv(dir), "CLAUDE_PROJECT_DIR="+dir, "PATH="+path, "GOCACHE="+gocache)
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

// goEnv is the Go environment of a test project at dir: offline, its
// module cache and proxy its own.
func goEnv(dir string) []string {
	return []string{"GOPATH=" + filepath.Join(dir, ".gopath"), "GOTOOLCHAIN=local", "GOPROXY=file://" + filepath.Join(dir, ".proxy"),
		"GOSUMDB=off", "GOFLAGS=-mod=mod -modcacherw", "HOME=" + dir}
}

// publishedModule makes dir a Go module that pins stopgate with go.mod's
// tool directive, from a module proxy in dir that publishes a stopgate
// v0.0.1 whose gate (and detect) prints where it runs and exits 2, as go get -tool
// pins the real one: go.mod and go.sum name it with its hash.
func publishedModule(t *testing.T, dir, gocmd string) {
	t.Helper()
	at := filepath.Join(dir, ".proxy", "github.com", "stopgate", "stopgate", "@v")
	os.MkdirAll(at, 0o755)
	mod := "module github.com/stopgate/stopgate\n\ngo 1.24\n"
	files := map[string]string{"list": "v0.0.1\n", "v0.0.1.info": `{"Version":"v0.0.1","Time":"2026-01-01T00:00:00Z"}`, "v0.0.1.mod": mod}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(at, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	main := "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc main() {\n\twd, _ := os.Getwd()\n\tfmt.Println(wd, os.Args[1:])\n\tos.Exit(2)\n}\n"
	for name, text := range map[string]string{"go.mod": mod, "cmd/gate/main.go": main, "cmd/detect/main.go": main} {
		w, err := z.Create("github.com/stopgate/stopgate@v0.0.1/" + name)
		if err == nil {
			_, err = io.WriteString(w, text)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(at, "v0.0.1.zip"), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/p\n\ngo 1.24\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	goRun(t, dir, gocmd, "get", "-tool", "github.com/stopgate/stopgate/cmd/gate@v0.0.1")
}

// goRun runs go with args in the test project at dir.
func goRun(t *testing.T, dir, gocmd string, args ...string) {
	t.Helper()
	cmd := exec.Command(gocmd, args...)
	cmd.Dir = dir
	cmd.Env = append(goEnv(dir), "PATH=/usr/bin:/bin", "GOCACHE="+goCache(t, gocmd))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// TestPluginGoToolNotPublished is the attack on the go.mod route: the
// agent, which may edit go.mod, go.work and vendor/ in the project, makes
// go tool build a gate of its own that passes every stop (here it prints
// nothing and exits 0). The launcher ran it; now it runs only stopgate's
// module as published, by the built program's build info (or, with no
// binary kept, by go list), and the stop halts saying why.
func TestPluginGoToolNotPublished(t *testing.T) {
	launcher, err := filepath.Abs(filepath.Join("..", "..", "plugins", "stopgate", "bin", "gate"))
	if err != nil {
		t.Fatal(err)
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	evil := map[string]string{
		"evil/go.mod":             "module github.com/stopgate/stopgate\n\ngo 1.24\n",
		"evil/cmd/gate/main.go":   "package main\n\nfunc main() {}\n",
		"evil/cmd/detect/main.go": "package main\n\nfunc main() {}\n",
	}
	gocache := goCache(t, gocmd)
	for _, tc := range []struct {
		name  string
		files map[string]string
		goArg []string // go run in the project after the files are written
		says  string   // the build info line the halt quotes
		at    string   // the version its remedy installs
	}{
		{"replace", map[string]string{"go.mod": "+replace github.com/stopgate/stopgate => ./evil\n"}, nil,
			"mod github.com/stopgate/stopgate v0.0.1 => ./evil (devel)", "v0.0.1"},
		{"replace in a block by version", map[string]string{"go.mod": "+replace (\n\tgithub.com/stopgate/stopgate v0.0.1 => ./evil\n)\n"}, nil,
			"mod github.com/stopgate/stopgate v0.0.1 => ./evil (devel)", "v0.0.1"},
		{"go.work", map[string]string{"go.work": "go 1.24\n\nuse (\n\t.\n\t./evil\n)\n"}, nil,
			"mod github.com/stopgate/stopgate (devel)", "latest"},
		{"vendor", map[string]string{"vendor/github.com/stopgate/stopgate/cmd/gate/main.go": evil["evil/cmd/gate/main.go"]}, []string{"mod", "vendor"},
			"built from vendor/", "v0.0.1"},
		// A build cache program (GOCACHEPROG) keeps no binary to read: go
		// list says what go tool would build.
		{"replace with no binary kept", map[string]string{"go.mod": "+replace github.com/stopgate/stopgate => ./evil\n",
			"../fakego/go": "#!/bin/sh\n[ \"$2\" = -n ] && { echo /nonexistent/b001/exe/$3; exit 0; }\nexec " + gocmd + " \"$@\"\n"}, nil,
			"mod github.com/stopgate/stopgate v0.0.1 => ./evil", "v0.0.1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "p")
			os.Mkdir(dir, 0o755)
			publishedModule(t, dir, gocmd)
			goRun(t, dir, gocmd, "get", "-tool", "github.com/stopgate/stopgate/cmd/detect@v0.0.1")
			if tc.goArg != nil {
				goRun(t, dir, gocmd, tc.goArg...)
			}
			for name, text := range evil {
				tc.files[name] = text
			}
			for name, text := range tc.files {
				path := filepath.Join(dir, name)
				flag := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
				if add, ok := strings.CutPrefix(text, "+"); ok {
					text, flag = add, os.O_WRONLY|os.O_APPEND
				}
				os.MkdirAll(filepath.Dir(path), 0o755)
				f, err := os.OpenFile(path, flag, 0o755)
				if err == nil {
					_, err = f.WriteString(text)
					f.Close()
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			env := append(goEnv(dir), "CLAUDE_PROJECT_DIR="+dir, "PATH="+filepath.Join(dir, "..", "fakego")+":/usr/bin:/bin:"+filepath.Dir(gocmd), "GOCACHE="+gocache)
			cmd := exec.Command(launcher, "--timeout", "600")
			cmd.Env = env
			cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop"}`)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			want := `{"continue":false,"stopReason":"stopgate cannot run in this project (go.mod's go tool gate is not stopgate as published (a replace, vendor/ or a go.work), so it is not run)`
			if err != nil || !strings.HasPrefix(string(out), want) {
				t.Errorf("the agent's own gate: %v, stdout %q, want %q…\nstderr: %s", err, out, want, stderr.String())
			}
			// The halt quotes why and gives the remedy that works; detect,
			// whose exit 126 the fallback answers, says the same on stderr.
			remedy := `CGO_ENABLED=0 GOBIN=\"$PWD\"/bin go install github.com/stopgate/stopgate/cmd/...@` + tc.at
			why := "its build says: " + tc.says + "; install it as published into bin/, which is run first: " + remedy + `"}`
			if !strings.HasSuffix(strings.TrimSpace(string(out)), why) {
				t.Errorf("the halt %q does not end %q", out, why)
			}
			detect := exec.Command(filepath.Join(filepath.Dir(launcher), "detect"))
			detect.Env = env
			detect.Stdin = strings.NewReader(`{"hook_event_name":"PreToolUse"}`)
			stderr.Reset()
			detect.Stderr = &stderr
			if err := detect.Run(); detect.ProcessState.ExitCode() != 126 || !strings.Contains(stderr.String(), "its build says: "+tc.says+";") {
				t.Errorf("detect: %v, stderr %q, want exit 126 and why", err, stderr.String())
			}
			fix := exec.Command("/bin/sh", "-c", strings.ReplaceAll(remedy, `\"`, `"`))
			fix.Dir, fix.Env = dir, env
			if out, err := fix.CombinedOutput(); err != nil {
				t.Fatalf("the remedy: %v\n%s", err, out)
			}
			cmd = exec.Command(launcher, "--timeout", "600")
			cmd.Dir, cmd.Env = dir, env
			cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop"}`)
			if out, err := cmd.Output(); cmd.ProcessState.ExitCode() != 2 || !strings.HasPrefix(string(out), dir+" ") {
				t.Errorf("after the remedy, the published gate: %v, stdout %q", err, out)
			}
		})
	}
}

// grepAwk is a folder holding only the machine's grep and awk, all the
// launcher needs of PATH.
func grepAwk(t *testing.T) string {
	t.Helper()
	tools := t.TempDir()
	for _, name := range []string{"grep", "awk"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(p, filepath.Join(tools, name)); err != nil {
			t.Fatal(err)
		}
	}
	return tools
}

// TestPluginGoToolQuoteSafe: the halt quotes a build-info line, whose
// replace path is the agent's text; a quote, a backslash or a control
// character in it must not break the JSON, which the client would then
// ignore and let the stop through.
func TestPluginGoToolQuoteSafe(t *testing.T) {
	launcher, err := filepath.Abs(filepath.Join("..", "..", "plugins", "stopgate", "bin", "gate"))
	if err != nil {
		t.Fatal(err)
	}
	tools, dir := grepAwk(t), t.TempDir()
	fakeGo := "#!/bin/sh\ncase \"$1 $2\" in\n" +
		"'tool -n') echo " + filepath.Join(tools, "built") + " ;;\n" +
		"'version -m') printf '%s: go1.24\\n\\tpath\\tgithub.com/stopgate/stopgate/cmd/gate\\n\\tmod\\tgithub.com/stopgate/stopgate\\tv0.0.1\\n\\t=>\\t./e\"v\\\\il\\001\\t(devel)\\t\\n' \"$3\" ;;\n" +
		"esac\n"
	for name, text := range map[string]string{filepath.Join(tools, "go"): fakeGo, filepath.Join(tools, "built"): "#!/bin/sh\nexit 0\n",
		filepath.Join(dir, "go.mod"): "module example.com/p\n\ngo 1.24\n\ntool github.com/stopgate/stopgate/cmd/gate\n"} {
		if err := os.WriteFile(name, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(launcher, "--timeout", "600")
	cmd.Env = []string{"CLAUDE_PROJECT_DIR=" + dir, "PATH=" + tools}
	cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop"}`)
	out, err := cmd.Output()
	var halt struct {
		Continue   *bool
		StopReason string
	}
	if err != nil || json.Unmarshal(out, &halt) != nil || halt.Continue == nil || *halt.Continue || !strings.Contains(halt.StopReason, "its build says: mod github.com/stopgate/stopgate v0.0.1 => ./e?v?il? (devel);") {
		t.Errorf("a halt quoting the agent's text: %v, stdout %q", err, out)
	}
}

// goCache is the machine's build cache, which the tests share: a fresh
// one would build the standard library again for each project.
func goCache(t *testing.T, gocmd string) string {
	t.Helper()
	out, err := exec.Command(gocmd, "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

// TestPluginPathInProject is the attack on the launcher's own programs and
// its PATH search: where PATH names a folder of the project (npm run puts
// node_modules/.bin there) or a relative one, the agent, which writes the
// project, put a gate there that passes every stop, or a go whose
// go tool -n names one. The launcher takes neither: with no stopgate
// installed, the stop halts. The folders are the project's as they lie,
// however CLAUDE_PROJECT_DIR spells it (a trailing slash, a /./).
func TestPluginPathInProject(t *testing.T) {
	launcher, err := filepath.Abs(filepath.Join("..", "..", "plugins", "stopgate", "bin", "gate"))
	if err != nil {
		t.Fatal(err)
	}
	pass := "#!/bin/sh\nexit 0\n"
	fakeGo := "#!/bin/sh\n[ \"$2\" = -n ] && { echo \"$PWD/evil\"; exit 0; }\nexit 0\n"
	// PATH's folders outside the project hold only grep and awk: the
	// machine's own go (in /usr/bin on some) would build nothing here and
	// halt for another reason.
	tools := grepAwk(t)
	for _, tc := range []struct {
		name, path string // path: PATH's first folder, relative to the project
		files      map[string]string
		spell      func(dir string) string // CLAUDE_PROJECT_DIR as written
	}{
		{"node_modules/.bin", "node_modules/.bin", map[string]string{"node_modules/.bin/gate": pass}, nil},
		{"relative", ".", map[string]string{"gate": pass}, nil},
		{"the project", "", map[string]string{"gate": pass}, nil},
		{"go", "node_modules/.bin", map[string]string{"node_modules/.bin/go": fakeGo, "evil": pass,
			"go.mod": "module example.com/p\n\ngo 1.24\n\ntool github.com/stopgate/stopgate/cmd/gate\n"}, nil},
		// With the project's folders taken off, PATH may hold no cat: the
		// Stop is still read as one (cat's failure read as no input passed it).
		{"no cat", "", map[string]string{"cat": pass}, nil},
		{"trailing slash", "node_modules/.bin", map[string]string{"node_modules/.bin/gate": pass},
			func(dir string) string { return dir + "/" }},
		{"dot", "node_modules/.bin", map[string]string{"node_modules/.bin/gate": pass},
			func(dir string) string { return filepath.Dir(dir) + "/./" + filepath.Base(dir) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, text := range tc.files {
				path := filepath.Join(dir, name)
				os.MkdirAll(filepath.Dir(path), 0o755)
				if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			first := tc.path
			if first != "." {
				first = filepath.Join(dir, first)
			}
			cmd := exec.Command(launcher, "--timeout", "600")
			cmd.Dir = dir
			path := first + ":" + tools
			if tc.name == "no cat" {
				path = first
			}
			project := dir
			if tc.spell != nil {
				project = tc.spell(dir)
			}
			cmd.Env = []string{"CLAUDE_PROJECT_DIR=" + project, "PATH=" + path}
			cmd.Stdin = strings.NewReader(`{"hook_event_name":"Stop"}`)
			out, err := cmd.Output()
			want := `{"continue":false,"stopReason":"stopgate is not installed in this project`
			if err != nil || !strings.HasPrefix(string(out), want) {
				t.Errorf("a program of the agent's on PATH: %v, stdout %q, want %q…", err, out, want)
			}
		})
	}
}

// TestGoToolInstallPublished is the attack on gate init's go tool method:
// its hooks run the programs in bin, which the guard protects, and bin is
// filled by the install command gate init names (and the stop's halt, on
// a machine without them). The agent added a replace to go.mod; a bare go
// install in the module built its gate, which passes every stop, for the
// next person who ran the command. The command installs stopgate as
// published, at the version go.mod pins.
func TestGoToolInstallPublished(t *testing.T) {
	gocmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "p")
	os.Mkdir(dir, 0o755)
	publishedModule(t, dir, gocmd)
	for name, text := range map[string]string{
		"evil/go.mod":           "module github.com/stopgate/stopgate\n\ngo 1.24\n",
		"evil/cmd/gate/main.go": "package main\n\nfunc main() {}\n",
	} {
		os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.OpenFile(filepath.Join(dir, "go.mod"), os.O_WRONLY|os.O_APPEND, 0)
	if err == nil {
		_, err = f.WriteString("replace github.com/stopgate/stopgate => ./evil\n")
		f.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	inst := installOf(dir, "bin", "/home/a/.cache/go-build/ab/gate")
	install := exec.Command("sh", "-c", inst.command)
	install.Dir = dir
	install.Env = append(goEnv(dir), "PATH=/usr/bin:/bin:"+filepath.Dir(gocmd), "GOCACHE="+goCache(t, gocmd))
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", inst.command, err, out)
	}
	gate := exec.Command(filepath.Join(dir, "bin", "gate"))
	gate.Run()
	if code := gate.ProcessState.ExitCode(); code != 2 {
		t.Errorf("%s installed a gate that exits %d; stopgate as published exits 2", inst.command, code)
	}
}
