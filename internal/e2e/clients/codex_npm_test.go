package clients

import (
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/e2e"
	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
	"github.com/stopgate/stopgate/internal/example"
)

// Codex in a JavaScript project that installs stopgate with npm, as a new
// user would (issues 31 and 32): the packages make dist builds, served as
// the registry will serve them once published. package.json gets the
// stopgate package alone, and npm picks the platform package by os and cpu
// (no file: path, no linux-x64 dependency). npx gate init --client codex
// registers the programs npm installed and a permission profile Codex
// takes; the real Codex, in its sandbox under that profile, reads the
// prompt (blocked), writes the joke (fixed), and stops (passed).
func TestCodexNpm(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed")
	}
	clientBin(t, "codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
	p := &Project{t: t, Dir: t.TempDir(), Home: t.TempDir(), capture: t.TempDir(), client: "codex"}
	if err := example.Copy(e2e.Root(t), p.Dir); err != nil {
		t.Fatal(err)
	}
	p.WriteFile("package.json", `{"name": "scratch", "private": true}`+"\n")
	npm := npmIn(t, p, e2e.NpmRegistry(t, e2e.NpmPackages(t)))
	npm("npm", "install", "-D", "stopgate")
	checkPackageJSON(t, p)
	if init := npm("npx", "gate", "init", "--client", "codex"); strings.Contains(init, "make install") || !strings.Contains(init, "node_modules/@stopgate/*/bin/gate") {
		t.Fatalf("npx gate init --client codex did not register npm's programs:\n%s", init)
	}
	if check := npm("npx", "gate", "check", "--client", "codex"); !strings.HasPrefix(lastLine(check), "ok: ") {
		t.Errorf("gate check --client codex:\n%s", check)
	}

	srv := Start(t, Responses, Script{
		after(LastHas(blocked), run("mkdir -p output && printf '%s\\n' '"+joke+"' > output/joke.txt")),
		When(LastHas("Process exited with code 0"), Text("Done.")),
		after(AtTurn(0), run("sed -n '1,80p' src/prompts/joke.md")),
	})
	r := codexSandboxed(t, p, srv, "Follow src/prompts/joke.md")
	blocks := 0
	for _, q := range r.Requests {
		if strings.Contains(q.Latest(), "Fix: Write the joke to output/joke.txt.") {
			blocks++
		}
	}
	if testing.Verbose() || blocks != 1 {
		t.Logf("err %v\nstdout: %s\nstderr: %s", r.Err, r.Stdout, tail(r.Stderr, 4000))
		for _, q := range r.Requests {
			t.Logf("request: %d messages, latest %q", len(q.Messages), tail(q.Latest(), 300))
		}
	}
	if blocks != 1 {
		t.Errorf("the stop was blocked %d times, want once: the read arms, the joke passes", blocks)
	}
	for _, refused := range []string{"Can't bind mount", "only supports `deny` access", "bwrap:"} {
		if strings.Contains(r.Stdout+r.Stderr, refused) {
			t.Errorf("Codex refused the profile: %q", refused)
		}
	}
	if got := p.ReadFile("output/joke.txt"); got != joke+"\n" {
		t.Errorf("output/joke.txt = %q", got)
	}
	if q := p.Pending(); len(q) != 0 {
		t.Errorf("entries left: %v", q)
	}
}

// npmIn returns a runner of npm and npx in p, against registry, that fails
// the test on a failing command and returns its output.
func npmIn(t *testing.T, p *Project, registry string) func(args ...string) string {
	cache := t.TempDir()
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = p.Dir
		cmd.Env = []string{"HOME=" + p.Home, "PATH=" + os.Getenv("PATH"), "npm_config_registry=" + registry,
			"npm_config_cache=" + cache, "npm_config_audit=false", "npm_config_fund=false", "npm_config_update_notifier=false"}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
}

// checkPackageJSON requires what a team commits to work on every
// platform: package.json names the stopgate package alone, by version, and
// the lock file holds the platform package as an optional dependency with
// its os and cpu, which npm matches on each machine.
func checkPackageJSON(t *testing.T, p *Project) {
	t.Helper()
	var pkg struct {
		Dev map[string]string `json:"devDependencies"`
		Dep map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal([]byte(p.ReadFile("package.json")), &pkg); err != nil {
		t.Fatal(err)
	}
	if len(pkg.Dev) != 1 || !strings.HasPrefix(pkg.Dev["stopgate"], "^") || len(pkg.Dep) != 0 {
		t.Errorf("package.json: %s", p.ReadFile("package.json"))
	}
	var lock struct {
		Packages map[string]struct {
			Optional bool     `json:"optional"`
			OS       []string `json:"os"`
			CPU      []string `json:"cpu"`
		} `json:"packages"`
	}
	if err := json.Unmarshal([]byte(p.ReadFile("package-lock.json")), &lock); err != nil {
		t.Fatal(err)
	}
	cpu := map[string]string{"amd64": "x64"}[runtime.GOARCH]
	if cpu == "" {
		cpu = runtime.GOARCH
	}
	platform := lock.Packages["node_modules/@stopgate/"+runtime.GOOS+"-"+cpu]
	if !platform.Optional || len(platform.OS) != 1 || platform.OS[0] != runtime.GOOS || len(platform.CPU) != 1 || platform.CPU[0] != cpu {
		t.Errorf("package-lock.json does not hold the platform package as npm's choice by os and cpu: %+v", platform)
	}
}

// lastLine is the last line of out.
func lastLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	return lines[len(lines)-1]
}
