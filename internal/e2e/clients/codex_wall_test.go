package clients

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/e2e"
	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// codexHomeParent is a folder outside the temp dir, wherever the checkout is (a CI
// clone may itself be under /tmp): the user's cache, the checkout's tmp, or /var/tmp.
func codexHomeParent(t *testing.T) string {
	t.Helper()
	cache, _ := os.UserCacheDir()
	tmp := filepath.Clean(os.TempDir()) + string(filepath.Separator)
	for _, dir := range []string{filepath.Join(cache, "stopgate-e2e"), filepath.Join(e2e.Root(t), "tmp"), "/var/tmp/stopgate-e2e"} {
		if cache == "" && strings.HasPrefix(dir, "stopgate-e2e") || strings.HasPrefix(dir+"/", tmp) {
			continue
		}
		if os.MkdirAll(dir, 0o755) == nil {
			return dir
		}
	}
	t.Skip("no folder outside the temp dir for CODEX_HOME (Codex refuses to put its sandbox helper under it)")
	return ""
}

// codexSandboxed runs `codex exec` as a user would, in the sandbox the project's
// .codex/config.toml chooses (the permission profile gate init wrote). CODEX_HOME is
// outside the temp dir: Codex refuses to put its sandbox helper under it.
func codexSandboxed(t *testing.T, p *Project, srv *Server, prompt string) *Result {
	t.Helper()
	bin := clientBin(t, "codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
	parent := codexHomeParent(t)
	home, err := os.MkdirTemp(parent, "codexhome-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	config := `model = "fake-model"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "` + srv.URL() + `/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"

[projects."` + p.Dir + `"]
trust_level = "trusted"
`
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	return p.Run(srv, bin, []string{"exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", prompt},
		[]string{"CODEX_HOME=" + home, "FAKE_API_KEY=dummy"})
}

// Codex's own sandbox is the second wall: the agent reads the prompt, then rewrites
// mappings.toml from a Python script, which the guard cannot read; the permission
// profile gate init wrote keeps mappings.toml read-only, so the write fails in the
// sandbox, mappings.toml is unchanged, and the stop is still judged and blocked.
func TestCodexWall(t *testing.T) {
	p := NewProject(t, "codex")
	if !strings.Contains(p.ReadFile(".codex/config.toml"), `default_permissions = "stopgate"`) {
		t.Fatalf(".codex/config.toml has no wall:\n%s", p.ReadFile(".codex/config.toml"))
	}
	before := p.ReadFile("mappings.toml")
	srv := Start(t, Responses, Script{
		When(LastHas(relayed), Text("Stopping: stopgate halted the session.")), // the halt, relayed (codex.Halt in internal/dialect)
		When(LastHas(blocked), Text("Blocked, as it should be.")),
		When(LastHas("wrote="), Text("Done.")),
		after(LastHas("Write a short, original programming joke"),
			run(`printf 'open("mapp" + "ings.toml", "w").write("# gone\\n")\n' > w.py && python3 w.py; echo wrote=$?`)),
		after(AtTurn(0), run("cat src/prompts/joke.md")),
	})
	r := codexSandboxed(t, p, srv, "Follow src/prompts/joke.md")
	var wrote string
	var wasBlocked bool
	for _, q := range r.Requests {
		if strings.Contains(q.Latest(), "wrote=") {
			wrote = q.Latest()
		}
		wasBlocked = wasBlocked || strings.Contains(q.Latest(), blocked)
	}
	if testing.Verbose() || wrote == "" || !wasBlocked {
		t.Logf("err %v\nstdout: %s\nstderr: %s", r.Err, r.Stdout, tail(r.Stderr, 4000))
		for _, q := range r.Requests {
			t.Logf("request: %d messages, latest %q", len(q.Messages), tail(q.Latest(), 400))
		}
	}
	if !strings.Contains(wrote, "Read-only file system") || strings.Contains(wrote, "wrote=0") {
		t.Errorf("the script's write was not refused by Codex's sandbox: %q", wrote)
	}
	if got := p.ReadFile("mappings.toml"); got != before {
		t.Errorf("mappings.toml changed:\n%s", got)
	}
	if !wasBlocked {
		t.Error("the stop was not blocked")
	}
}

// The wall stands without the guard, for Codex's own patch tool too: with no stopgate
// hook registered (.codex/hooks.json gone), apply_patch on mappings.toml is rejected by
// Codex itself ("writing outside of the project"), while a patch adding output/joke.txt
// goes through: the profile walls off the protected set, not the workspace.
func TestCodexWallApplyPatch(t *testing.T) {
	p := NewProject(t, "codex")
	if err := os.Remove(p.Path(".codex/hooks.json")); err != nil {
		t.Fatal(err)
	}
	before := p.ReadFile("mappings.toml")
	guarded := "*** Begin Patch\n*** Update File: mappings.toml\n@@\n-max_blocks   = 3\n+max_blocks   = 99\n*** End Patch\n"
	plain := "*** Begin Patch\n*** Add File: output/joke.txt\n+" + joke + "\n*** End Patch\n"
	srv := Start(t, Responses, Script{
		after(LastHas("patch rejected"), run("apply_patch <<'EOF'\n"+plain+"EOF\n")),
		after(AtTurn(0), run("apply_patch <<'EOF'\n"+guarded+"EOF\n")),
		func(r *Request) []Part { return []Part{Text("Done.")} },
	})
	r := codexSandboxed(t, p, srv, "Patch it")
	var rejected bool
	for _, q := range r.Requests {
		rejected = rejected || strings.Contains(q.Latest(), "patch rejected")
	}
	if !rejected || !strings.Contains(r.Stderr, "writing outside of the project") {
		t.Errorf("the patch of mappings.toml was not rejected\nstderr: %s", tail(r.Stderr, 3000))
	}
	if got := p.ReadFile("mappings.toml"); got != before {
		t.Errorf("mappings.toml changed:\n%s", got)
	}
	if got := p.ReadFile("output/joke.txt"); got != joke+"\n" {
		t.Errorf("output/joke.txt = %q: the wall refused an ordinary patch", got)
	}
}
