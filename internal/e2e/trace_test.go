package e2e

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/example"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/trust"
	"github.com/stopgate/stopgate/internal/trust/program"
)

// traceConfig arms two checks of the agent's file and a run validator that
// sources a helper of validators/, confined when bwrap works.
const traceConfig = `[settings]
prompts_dir = "src/prompts"
state_dir   = "tmp/validation"
confine     = %t
reuse       = %t

[[mapping]]
prompt     = "joke"
validators = ["joke-file", "joke-test"]

[validators.joke-file]
file         = "output/joke.txt"
not_contains = "TODO"

[validators.joke-test]
run = "validators/joke.sh"
`

// systemReads are the paths outside the trusted base the hooks may open,
// each with why it cannot steer a verdict: the kernel's and the Go
// runtime's views of the process and machine, files only root writes that
// the runtime and the system's programs read, and the system's programs
// themselves (program.SystemPath, where the hooks find sh and bwrap).
var systemReads = []struct{ prefix, why string }{
	{"/proc/", "the kernel's view of a process (Go runtime, bwrap)"},
	{"/sys/", "the kernel's view of the machine (Go runtime: huge page size)"},
	{"/dev/", "null, tty and random devices"},
	{"/etc/", "the system's configuration (time zone, users, ld.so), root's"},
	{"/usr/share/zoneinfo/", "time zones, root's"},
	{"/lib", "the system's libraries, root's"},
	{"/usr/lib", "the system's libraries, root's"},
}

// TestHooksOpenOnlyTheTrustedBase runs detect and gate, as built, on the
// events of a session (a read arming a prompt, a guarded write, a failing
// stop, a passing stop, a ConfigChange) under strace, and fails on any path
// they open or execute that trust.For does not declare and no system
// entry above explains. The validators' own processes are the agent's
// code and are left out: only what the hooks themselves read and run is
// the trusted base.
func TestHooksOpenOnlyTheTrustedBase(t *testing.T) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("the trace needs strace (scripts/install-sandbox-tools installs it)")
	}
	if out, err := exec.Command(strace, "-f", "-o", os.DevNull, "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here (no ptrace?): %v: %s", err, out)
	}
	_, err = exec.Command("bwrap", "--ro-bind", "/", "/", "true").CombinedOutput()
	for _, c := range []struct{ confine, reuse bool }{{false, false}, {err == nil, true}} {
		t.Run(fmt.Sprintf("confine=%t,reuse=%t", c.confine, c.reuse), func(t *testing.T) { traceSession(t, strace, c.confine, c.reuse) })
	}
}

// traceSession plays the session's events on a fresh project with
// [settings] confine and reuse as given and checks each hook's trace.
func traceSession(t *testing.T, strace string, confine, reuse bool) {
	root, _ := filepath.EvalSymlinks(t.TempDir())
	home, _ := filepath.EvalSymlinks(t.TempDir())
	tmp, _ := filepath.EvalSymlinks(t.TempDir())
	p := traceProject(t, root, home, confine, reuse)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "CLAUDE_PROJECT_DIR=" + root, "TMPDIR=" + tmp}
	transcript := filepath.Join(home, ".claude/projects/p/s.jsonl")
	var execs []string
	run := func(prog, event string, fields string) string {
		t.Helper()
		in := fmt.Sprintf(`{"session_id":"s","transcript_path":%q,"cwd":%q,"hook_event_name":%q%s}`, transcript, root, event, fields)
		out := filepath.Join(t.TempDir(), "trace")
		cmd := exec.Command(strace, "-f", "-qq", "-y", "-o", out, "-e", "trace=execve,open,openat,openat2,clone,clone3,fork,vfork", filepath.Join(root, "bin", prog))
		cmd.Dir, cmd.Env, cmd.Stdin = root, env, strings.NewReader(in)
		stdout, _ := cmd.Output()
		execs = append(execs, checkTrace(t, prog+" "+event, out, p, reuse)...)
		return string(stdout)
	}
	if out := run(hook.Detect, "PostToolUse", fmt.Sprintf(`,"tool_name":"Read","tool_input":{"file_path":%q},"tool_response":{}`, filepath.Join(root, "src/prompts/joke.md"))); out != "" {
		t.Logf("detect PostToolUse: %s", out)
	}
	if out := run(hook.Detect, "PreToolUse", fmt.Sprintf(`,"tool_name":"Write","tool_input":{"file_path":%q,"content":"x"}`, filepath.Join(root, "bin/gate"))); !strings.Contains(out, "deny") {
		t.Errorf("the guard let a write of bin/gate through: %q", out)
	}
	if out := run(hook.Gate, "Stop", `,"stop_hook_active":false`); !strings.Contains(out, `"block"`) {
		t.Errorf("a stop with the joke missing was not blocked: %q", out)
	}
	if err := os.MkdirAll(filepath.Join(root, "output"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(root, "output/joke.txt"), []byte("a joke\n"), 0o644)
	if out := run(hook.Gate, "Stop", `,"stop_hook_active":true`); strings.Contains(out, `"block"`) || strings.Contains(out, `"continue":false`) {
		t.Errorf("a stop with the joke written did not pass: %q", out)
	}
	// The validator must have run under the trace, or its exclusion was
	// never put to the test.
	runner := program.Shell()
	if confine {
		runner, _ = program.System("bwrap")
	}
	if !slices.Contains(execs, runner) {
		t.Errorf("the hooks never executed %s: the validator did not run under the trace (execs %q)", runner, execs)
	}
	run(hook.Gate, "ConfigChange", fmt.Sprintf(`,"source":"project_settings","file_path":%q`, filepath.Join(root, ".claude/settings.json")))
}

// traceProject makes the example project at root with the commands built
// in its bin/, registered by gate init, a validator that sources a helper
// and reads the agent's file, and returns the trusted base the hooks run
// with.
func traceProject(t *testing.T, root, home string, confine, reuse bool) *trust.Base {
	t.Helper()
	if err := example.Copy(Root(t), root); err != nil {
		t.Fatal(err)
	}
	built := Stopgate(t)
	for _, name := range hook.Programs {
		if err := example.CopyTree(filepath.Join(built, name), filepath.Join(root, "bin", name)); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"mappings.toml":              fmt.Sprintf(traceConfig, confine, reuse),
		"validators/joke.sh":         ". validators/lib.sh\ngrep -q joke output/joke.txt\n",
		"validators/lib.sh":          "set -e\n",
		".claude/projects/p/s.jsonl": "",
	}
	for name, content := range files {
		dir := root
		if strings.HasPrefix(name, ".claude/projects") {
			dir = home
		}
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(filepath.Join(root, "bin", hook.Gate), "init")
	cmd.Dir, cmd.Env = root, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gate init: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(filepath.Join(root, "mappings.toml"))
	cfg, err := config.Parse(data, filepath.Join(root, "mappings.toml"), root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := trust.For(trust.Project{Root: root, Home: home, File: cfg.File, Config: cfg, Transcript: filepath.Join(home, ".claude/projects/p/s.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// traceLine is one line of strace -f -y output: the pid, the call and its
// first quoted path (an openat's relative one joined to its directory), and
// a clone's new pid.
var (
	traceLine = regexp.MustCompile(`^(\d+) +(?:<\.\.\. )?(\w+)\(?(.*)$`)
	firstPath = regexp.MustCompile(`^(?:(?:AT_FDCWD|\d+)<([^>]*)>, )?"([^"]*)"`)
	cloned    = regexp.MustCompile(`= (\d+)(?:<[^>]*>)?$`)
)

// checkTrace fails t on each path the hooks' processes opened or executed
// in the strace output at file that b does not declare. A process is the
// hooks' until it executes something other than stopgate's own program:
// then it is the system's program or a validator, the agent's code, and
// what it opens is not the hooks' (the exec itself is checked). It
// returns what the hooks executed.
func checkTrace(t *testing.T, what, file string, b *trust.Base, reuse bool) (execs []string) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatalf("%s: no trace: %v", what, err)
	}
	defer f.Close()
	var lines [][]string
	parent := map[int]int{} // a clone's child may run before its parent's clone returns
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	pending := map[string]string{}
	for sc.Scan() {
		if m := traceLine.FindStringSubmatch(joinResumed(sc.Text(), pending)); m != nil {
			lines = append(lines, m)
			if c := cloned.FindStringSubmatch(m[3]); c != nil && (strings.HasPrefix(m[2], "clone") || strings.HasSuffix(m[2], "fork")) {
				child, _ := strconv.Atoi(c[1])
				parent[child], _ = strconv.Atoi(m[1])
			}
		}
	}
	if len(lines) == 0 {
		t.Fatalf("%s: an empty trace", what)
	}
	first, _ := strconv.Atoi(lines[0][1])
	hooks, seen := map[int]bool{first: true}, map[string]bool{}
	for _, m := range lines {
		pid, _ := strconv.Atoi(m[1])
		ours, known := hooks[pid]
		if !known {
			ours = hooks[parent[pid]]
			hooks[pid] = ours
		}
		call, rest := m[2], m[3]
		pm := firstPath.FindStringSubmatch(rest)
		if pm == nil || !ours || strings.Contains(rest, " = -1 ") || (call != "execve" && strings.Contains(rest, "O_DIRECTORY")) {
			continue // a failed lookup reads nothing; a folder's listing, names only
		}
		path := pm[2]
		if !filepath.IsAbs(path) {
			path = filepath.Join(pm[1], path)
		}
		if call == "execve" {
			execs = append(execs, path)
			hooks[pid] = slices.Contains(hook.Programs, filepath.Base(path)) && filepath.Dir(path) == filepath.Join(b.Root, "bin")
		}
		if seen[call+path] {
			continue
		}
		seen[call+path] = true
		if why := undeclared(call, filepath.Clean(path), b, reuse); why != "" {
			t.Errorf("%s: %s %s: %s", what, call, path, why)
		}
	}
	return execs
}

// joinResumed returns line whole: strace -f splits a call that another
// thread interrupts into "<unfinished ...>" and "<... call resumed>" lines,
// the path on one and the result on the other, and a failed lookup must
// be known as failed. An unfinished line is kept in pending by its pid
// and answers "".
func joinResumed(line string, pending map[string]string) string {
	pid, rest, _ := strings.Cut(strings.TrimLeft(line, " "), " ")
	rest = strings.TrimLeft(rest, " ")
	if call, ok := strings.CutSuffix(rest, " <unfinished ...>"); ok {
		pending[pid] = call
		return ""
	}
	if _, result, ok := strings.Cut(rest, " resumed>"); ok && strings.HasPrefix(rest, "<... ") && pending[pid] != "" {
		call := pending[pid]
		delete(pending, pid)
		return pid + " " + call + result
	}
	return line
}

// undeclared says why path, which a hook opened (or executed, call
// execve), is not in b nor a system entry nor the work judged; "" when it
// is. The work judged is read as bytes, never run nor taken as a setting:
// the file validators' files, and with reuse on every file of the tree,
// which the fingerprint hashes.
func undeclared(call, path string, b *trust.Base, reuse bool) string {
	rel, err := filepath.Rel(b.Root, path)
	inTree := err == nil && filepath.IsLocal(rel)
	switch {
	case call != "execve" && inTree && (reuse || rel == filepath.FromSlash("output/joke.txt")):
		return ""
	case call == "execve":
		if slices.Contains(program.SystemPath, filepath.Dir(path)) {
			return ""
		}
	case slices.ContainsFunc(systemReads, func(s struct{ prefix, why string }) bool { return strings.HasPrefix(path, s.prefix) }):
		return ""
	}
	if b.Guard().CheckPath(path, b.Root) != nil {
		return ""
	}
	return "not in the trusted base (trust.For) nor a system path"
}

// TestJoinResumed: a lookup that strace -f splits around another thread's
// calls is judged with its result, so a failed open is never taken for a
// read (the flake this fixed: ConfigChange's ENOENT on .codex/hooks.json).
func TestJoinResumed(t *testing.T) {
	lines := []string{
		`4711  openat(AT_FDCWD</r>, "/r/.codex/hooks.json", O_RDONLY|O_CLOEXEC <unfinished ...>`,
		`4712  futex(0xc000100148, FUTEX_WAKE_PRIVATE, 1) = 1`,
		`4711  <... openat resumed>) = -1 ENOENT (No such file or directory)`,
		`4711  openat(AT_FDCWD</r>, "/r/mappings.toml", O_RDONLY|O_CLOEXEC) = 3</r/mappings.toml>`,
		`4713  <... clone resumed>) = 4714`,
	}
	want := []string{
		"",
		lines[1],
		`4711 openat(AT_FDCWD</r>, "/r/.codex/hooks.json", O_RDONLY|O_CLOEXEC) = -1 ENOENT (No such file or directory)`,
		lines[3],
		lines[4], // nothing pending: kept as it is
	}
	pending := map[string]string{}
	for i, line := range lines {
		if got := joinResumed(line, pending); got != want[i] {
			t.Errorf("line %d: got %q, want %q", i, got, want[i])
		}
	}
}
