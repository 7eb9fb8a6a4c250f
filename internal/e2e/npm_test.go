package e2e

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
	"github.com/stopgate/stopgate/internal/example"
)

// TestNpmInstall: the npm packages make dist builds for this platform,
// installed into a project from their tarballs with no registry and no
// change to package.json, give `npx gate --version` and an `npx gate init`
// whose hooks run the native programs: the real client is blocked, then
// passes.
func TestNpmInstall(t *testing.T) {
	p, run := npmProject(t)
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

	r := playJoke(t, p)
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

// npmProject is the example project with stopgate's npm packages installed
// from make dist's tarballs by the local route (package.json unchanged),
// and run, which runs a command there offline.
func npmProject(t *testing.T) (*Project, func(args ...string) string) {
	p := NewProject(t)
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	if err := example.Copy(Root(t), p.Path(".")); err != nil {
		t.Fatal(err)
	}
	tarballs := NpmPackages(t)
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
	// The local route docs/install.md gives until publication: package.json
	// is left as it was (a file: path or one platform's package there would
	// give every other machine nothing that runs).
	run(append([]string{"npm", "install", "--no-save"}, tarballs...)...)
	if got := p.ReadFile("package.json"); got != `{"name": "scratch", "private": true}`+"\n" {
		t.Errorf("package.json changed: %s", got)
	}
	return p, run
}

// TestNpmTeammateNotInstalled: a project set up by npx gate init, cloned by
// a teammate who has not run npm install (node_modules is absent). The
// agent works in a session that touches no mapped prompt: git status runs
// and the session completes. A session that reads a mapped prompt halts,
// naming npm install: the check that prompt arms could not run.
func TestNpmTeammateNotInstalled(t *testing.T) {
	p, run := npmProject(t)
	run("npx", "gate", "init")
	run("git", "init", "-q")
	if err := os.RemoveAll(p.Path("node_modules")); err != nil {
		t.Fatal(err)
	}
	api := Start(t, Anthropic, Script{
		When(ResultOf("Bash"), Text("Done.")),
		When(AtTurn(0), Tool("Bash", map[string]any{"command": "git status", "description": "Show the status"})),
	})
	r := p.Run(api, "What is the git status?")
	if !r.Told("No commits yet") {
		r.Errorf("git status did not run: the model was not shown its output")
	}
	if r.Final.TerminalReason != "completed" {
		r.Errorf("terminal_reason %q, want completed: a session with no mapped prompt must end freely", r.Final.TerminalReason)
	}

	api = Start(t, Anthropic, Script{
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	r = p.Run(api, "Tell a joke as src/prompts/joke.md says.")
	if r.Final.TerminalReason != "stop_hook_prevented" {
		r.Errorf("terminal_reason %q, want stop_hook_prevented (the halt)", r.Final.TerminalReason)
	}
	if h := r.Halt(); !strings.Contains(h, "stopgate is not installed on this machine") || !strings.Contains(h, "npm install") {
		r.Errorf("the halt does not say stopgate is missing and how to install it: %q", h)
	}
}
