package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
	"github.com/stopgate/stopgate/internal/example"
)

// addMarketplace installs stopgate's plugin from this repository's
// marketplace, by its local path, into p's throwaway HOME, as a user would:
// claude plugin marketplace add, claude plugin install. The project has no
// hooks of its own.
func addMarketplace(t *testing.T, p *Project) {
	t.Helper()
	p.hooks = map[string][]hookGroup{}
	p.WriteFile(".claude/settings.json", "{}\n")
	for _, args := range [][]string{
		{"plugin", "marketplace", "add", Root(t)},
		{"plugin", "install", "stopgate@stopgate"},
	} {
		cmd := exec.Command(Claude(t), args...)
		cmd.Dir = p.Dir
		cmd.Env = p.env("http://127.0.0.1:9") // no model is asked
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("claude %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
}

func jokeScript(p *Project) Script {
	return Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	}
}

// TestMarketplacePlugin: the plugin from this repository's marketplace
// runs the programs the project installed (its bin/): the real client is
// blocked, then passes.
func TestMarketplacePlugin(t *testing.T) {
	p := NewStopgateProject(t)
	addMarketplace(t, p)
	api := Start(t, Anthropic, jokeScript(p))
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")
	for _, want := range []string{`the prompt "joke" will be checked`, blocked + ": 2 checks failed."} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	if got := p.ReadFile("output/joke.txt"); got != joke+"\n" {
		r.Errorf("output/joke.txt = %q", got)
	}
	if r.Final.TerminalReason != "completed" {
		r.Errorf("terminal_reason %q, want completed", r.Final.TerminalReason)
	}
	if pending := p.Pending(); len(pending) > 0 {
		r.Errorf("entries left pending: %v", pending)
	}
}

// TestMarketplacePluginNotInstalled: with the plugin but no stopgate
// programs in the project, the first stop halts with the install command;
// the session does not end as a plain success.
func TestMarketplacePluginNotInstalled(t *testing.T) {
	p := NewProject(t)
	if err := example.Copy(Root(t), p.Path(".")); err != nil {
		t.Fatal(err)
	}
	addMarketplace(t, p)
	api := Start(t, Anthropic, jokeScript(p))
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")
	if r.Final.TerminalReason != "stop_hook_prevented" {
		r.Errorf("terminal_reason %q, want stop_hook_prevented (the halt)", r.Final.TerminalReason)
	}
	halted := r.Halt()
	if !strings.Contains(halted, "stopgate is not installed in this project") || !strings.Contains(halted, "npm install -D stopgate") {
		r.Errorf("the stop was not halted with the install command: %q", halted)
	}
}

// TestMarketplacePluginGoToolBroken: a project pins stopgate with go.mod's
// tool directive, and the pinned stopgate does not build (here it does not
// compile; a module that cannot be downloaded or a go.sum that does not
// match fail the same way). go tool exited 1, the launcher passed that on,
// and the client let the stop through as a non-blocking error. Now the stop
// halts and says why.
func TestMarketplacePluginGoToolBroken(t *testing.T) {
	r := goToolSession(t, "package main\n\nfunc main() { undefined() }\n")
	if halted := r.Halt(); !strings.Contains(halted, "go tool gate does not build here") {
		r.Errorf("the stop was not halted with why: %q", halted)
	}
}

// goToolSession runs the joke prompt in the example project with the
// plugin, its go.mod pinning stopgate as a tool that a replace points at
// ./sg, whose gate is main (Go source), and checks the stop halted.
func goToolSession(t *testing.T, main string) *Result {
	p := NewProject(t)
	if err := example.Copy(Root(t), p.Path(".")); err != nil {
		t.Fatal(err)
	}
	addMarketplace(t, p)
	p.WriteFile("go.mod", "module example.com/p\n\ngo 1.24\n\nrequire github.com/stopgate/stopgate v0.0.0\n\n"+
		"replace github.com/stopgate/stopgate => ./sg\n\ntool github.com/stopgate/stopgate/cmd/gate\n")
	p.WriteFile("sg/go.mod", "module github.com/stopgate/stopgate\n\ngo 1.24\n")
	p.WriteFile("sg/cmd/gate/main.go", main)
	gocache, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	p.Env = append(p.Env, "GOCACHE="+strings.TrimSpace(string(gocache)), "GOTOOLCHAIN=local", "GOPROXY=off", "GOFLAGS=-mod=mod")
	api := Start(t, Anthropic, jokeScript(p))
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")
	if r.Final.TerminalReason != "stop_hook_prevented" {
		r.Errorf("terminal_reason %q, want stop_hook_prevented (the halt)", r.Final.TerminalReason)
	}
	return r
}

// TestMarketplacePluginGoToolReplaced is the attack on the go.mod route,
// on the real client: the agent can edit go.mod, and a replace points
// stopgate's module at a gate of its own that passes every stop. The
// plugin ran it, and the session ended as a success with the prompt's
// checks never run; now it runs only stopgate as published, and the stop
// halts saying why.
func TestMarketplacePluginGoToolReplaced(t *testing.T) {
	r := goToolSession(t, "package main\n\nfunc main() {}\n")
	if halted := r.Halt(); !strings.Contains(halted, "go tool gate is not stopgate as published") {
		r.Errorf("the stop was not halted with why: %q", halted)
	}
}

// TestMarketplacePluginInitWalls: with the plugin installed by the real
// client (claude plugin install), gate init in the project writes the OS
// wall and no hooks (the plugin's would run a second time), gate check
// finds the plugin's hooks and is clean, and a session is still gated:
// blocked, then passed.
func TestMarketplacePluginInitWalls(t *testing.T) {
	p := NewStopgateProject(t)
	addMarketplace(t, p)
	gate := func(args ...string) string {
		cmd := exec.Command(filepath.Join(Stopgate(t), "gate"), args...)
		cmd.Dir = p.Dir
		cmd.Env = p.env("http://127.0.0.1:9")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("gate %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	if out := gate("init"); !strings.Contains(out, ".claude/settings.json: no hooks: stopgate's plugin registers them") || !strings.Contains(out, "+ sandbox.enabled") {
		t.Fatalf("gate init did not write the wall alone:\n%s", out)
	}
	if settings := p.ReadFile(".claude/settings.json"); strings.Contains(settings, `"hooks"`) {
		t.Errorf("gate init registered hooks beside the plugin's:\n%s", settings)
	}
	if out := gate("check"); strings.Contains(out, "warning") || !strings.Contains(out, "every stopgate hook registered; the OS wall is up") {
		t.Errorf("gate check after gate init is not clean:\n%s", out)
	}
	api := Start(t, Anthropic, jokeScript(p))
	r := p.Run(api, "Tell a joke as src/prompts/joke.md says.")
	if !r.Told(blocked + ": 2 checks failed.") {
		r.Errorf("the model was not blocked: the plugin's hooks did not judge the stop")
	}
	if r.Final.TerminalReason != "completed" {
		r.Errorf("terminal_reason %q, want completed", r.Final.TerminalReason)
	}
}
