package e2e

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/dist"
	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
	"github.com/stopgate/stopgate/internal/example"
)

// TestNpmInstall: the npm packages make dist builds for this platform,
// installed into a project from their tarballs with no registry, give
// `npx gate --version` and an `npx gate init` whose hooks run the native
// programs: the real client is blocked, then passes.
func TestNpmInstall(t *testing.T) {
	p := NewProject(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	if err := example.Copy(Root(t), p.Path(".")); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "dist")
	var log bytes.Buffer
	err := dist.Build(dist.Options{Go: "go", Src: Root(t), Out: out, Platforms: []string{runtime.GOOS + "/" + runtime.GOARCH}, Log: &log})
	if err != nil {
		t.Fatalf("dist: %v\n%s", err, log.String())
	}
	tarballs, _ := filepath.Glob(filepath.Join(out, "npm", "*.tgz"))
	if len(tarballs) != 2 {
		t.Fatalf("npm tarballs: %v", tarballs)
	}
	p.WriteFile("package.json", `{"name": "scratch", "private": true}`+"\n")
	cache := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = p.Dir
		cmd.Env = append(p.env("http://127.0.0.1:9"), "npm_config_cache="+cache, "npm_config_offline=true",
			"npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	run(append([]string{"npm", "install"}, tarballs...)...)
	if v := run("npx", "gate", "--version"); !strings.HasPrefix(v, "gate v") || !strings.Contains(v, "commit ") {
		t.Errorf("npx gate --version: %q", v)
	}
	if init := run("npx", "gate", "init"); !strings.Contains(init, ".claude/settings.json: registered") {
		t.Fatalf("npx gate init registered nothing:\n%s", init)
	}
	// The hooks run the native programs, never node's shim.
	if s := p.ReadFile(".claude/settings.json"); !strings.Contains(s, `\"$CLAUDE_PROJECT_DIR\"/node_modules/@stopgate/*/bin/gate`) {
		t.Fatalf("settings do not run the native gate:\n%s", s)
	}

	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")
	for _, want := range []string{`the prompt "joke" will be checked`, blocked + ": 2 checks failed."} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	if r.Final.TerminalReason != "completed" {
		r.Errorf("terminal_reason %q, want completed", r.Final.TerminalReason)
	}
	if got := p.ReadFile("output/joke.txt"); got != joke+"\n" {
		r.Errorf("output/joke.txt = %q", got)
	}
	if pending := p.Pending(); len(pending) > 0 {
		r.Errorf("entries left pending: %v", pending)
	}
}
