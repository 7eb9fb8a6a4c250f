package e2e

import (
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
