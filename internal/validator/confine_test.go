package validator

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/trust/program"
)

// needBwrap skips where bubblewrap cannot run (scripts/install-sandbox-tools,
// run by make test, installs it).
func needBwrap(tb testing.TB) {
	tb.Helper()
	if _, err := Bwrap(); err != nil {
		tb.Skipf("no confinement here: %v", err)
	}
}

// confinedProject is a project whose mappings.toml and validators/ are
// read-only to its validators.
func confinedProject(t *testing.T) (Env, string) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "validators"), 0o755)
	os.MkdirAll(filepath.Join(dir, "tmp", "validation"), 0o755)
	os.WriteFile(filepath.Join(dir, "mappings.toml"), []byte("[settings]\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "validators", "check.sh"), []byte("#!/bin/sh\nexit 0\n"), 0o755)
	env := Env{Dir: dir, Vars: []string{"STOPGATE_PROMPT=p"}, Confine: &Confinement{Required: true, ReadOnly: []string{
		filepath.Join(dir, "mappings.toml"), filepath.Join(dir, "validators"), filepath.Join(dir, "tmp", "validation"),
		filepath.Join(dir, "not-there"),
	}}}
	return env, dir
}

func TestConfinedCommandCannotWriteTheProtectedSet(t *testing.T) {
	needBwrap(t)
	env, dir := confinedProject(t)
	home := t.TempDir()
	// Each in a subshell: a failed redirection of ":" ends a shell.
	attacks := "(" + strings.Join([]string{
		`: > mappings.toml`,
		`echo 'exit 0' > validators/check.sh`,
		`rm -rf validators tmp/validation`,
		`mv mappings.toml gone.toml`,
		`umount "$PWD/mappings.toml"`,
		`umount -l "$PWD/validators"`,
		`mount -o remount,rw,bind "$PWD/mappings.toml"`,
		`chmod 777 mappings.toml`,
		`touch tmp/validation/forged.json`,
		`for p in /proc/[0-9]*; do : > "$p/root$PWD/mappings.toml"; done`,
		`unshare -Urm sh -c 'umount "$PWD/mappings.toml"; : > mappings.toml'`,
		`ln mappings.toml linked.toml`,
		`ln validators/check.sh linked.sh`,
	}, ") 2>/dev/null\n(") + ") 2>/dev/null\n"
	run := attacks + `
test "$PWD" = "` + dir + `" || { echo "cwd $PWD"; exit 1; }
test "$STOPGATE_PROMPT" = p || { echo "env lost"; exit 1; }
echo made > scratch.txt && echo cached > "$HOME/cache" && echo tmp > "$TMPDIR/t" || exit 1
echo confined; exit 3`
	t.Setenv("HOME", home)
	t.Setenv("TMPDIR", t.TempDir())
	r := Run(context.Background(), env, []Spec{{Name: "agent-tests", Run: run, Timeout: 20 * time.Second}})[0]
	if r.ExitCode != 3 || !strings.Contains(r.Output, "confined") {
		t.Fatalf("the confined command did not run to its end: %+v", r)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "mappings.toml")); string(data) != "[settings]\n" {
		t.Errorf("mappings.toml changed: %q", data)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "validators", "check.sh")); string(data) != "#!/bin/sh\nexit 0\n" {
		t.Errorf("validators/check.sh changed: %q", data)
	}
	if _, err := os.Stat(filepath.Join(dir, "tmp", "validation", "forged.json")); err == nil {
		t.Errorf("the state dir was written")
	}
	if st, _ := os.Stat(filepath.Join(dir, "mappings.toml")); st == nil || st.Mode().Perm() != 0o644 {
		t.Errorf("mappings.toml's mode changed: %v", st)
	}
	for _, f := range []string{"linked.toml", "linked.sh"} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			t.Errorf("a hard link to a read-only file was made: %s", f)
		}
	}
	for _, f := range []string{filepath.Join(dir, "scratch.txt"), filepath.Join(home, "cache")} {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("a write outside the protected set was lost: %v", err)
		}
	}
}

// The engine's contracts hold inside the sandbox: a timeout kills every
// process the validator started, output is capped.
func TestConfinedCommandKeepsTheEngineContracts(t *testing.T) {
	needBwrap(t)
	env, dir := confinedProject(t)
	pidFile := filepath.Join(dir, "child.pid")
	start := time.Now()
	r := Run(context.Background(), env, []Spec{{Name: "hang", Run: hang + ` & echo $! > child.pid; ` + hang, Timeout: time.Second}})[0]
	if !strings.Contains(r.Problem, "timed out") || time.Since(start) > 15*time.Second {
		t.Fatalf("hang: %+v after %s", r, time.Since(start))
	}
	// The pid inside is of the sandbox's own pid namespace: look for any
	// hang left instead.
	if data, err := os.ReadFile(pidFile); err != nil || len(data) == 0 {
		t.Fatalf("the background child never started: %v", err)
	}
	if left := sleepers(t); left != "" {
		t.Errorf("processes left after the timeout: %s", left)
	}

	env.OutputLimit = 1000
	r = Run(context.Background(), env, []Spec{{Name: "loud", Run: `yes | head -c 100000`}})[0]
	if len(r.Output) != 1000 || r.Dropped != 99000 || !r.Passed {
		t.Errorf("loud: kept %d, dropped %d, %+v", len(r.Output), r.Dropped, r.Summary())
	}
}

// hang is a validator that runs until it is killed: a sleep whose length
// is this test process's own, so that sleepers never counts the sleeps of
// the same tests running in another checkout at the same time.
var hang = "sleep " + strconv.Itoa(100000+os.Getpid())

// sleepers lists the processes still running hang.
func sleepers(t *testing.T) string {
	var out []string
	deadline := time.Now().Add(3 * time.Second)
	for {
		out = out[:0]
		ents, _ := os.ReadDir("/proc")
		for _, e := range ents {
			cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err == nil && string(cmdline) == strings.ReplaceAll(hang, " ", "\x00")+"\x00" {
				if stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); !strings.Contains(string(stat), ") Z ") {
					out = append(out, e.Name())
				}
			}
		}
		if len(out) == 0 || time.Now().After(deadline) {
			return strings.Join(out, " ")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Without bwrap, a required confinement fails the check unrun; an optional
// one runs it as before.
func TestConfinementWithoutBwrap(t *testing.T) {
	saved := probe.path
	savedErr := probe.err
	probe.once = sync.Once{}
	t.Cleanup(func() {
		probe.once = sync.Once{}
		probe.once.Do(func() { probe.path, probe.err = saved, savedErr })
	})
	t.Setenv("PATH", t.TempDir()+":/nonexistent")
	system := program.SystemPath
	program.SystemPath = []string{t.TempDir()}
	t.Cleanup(func() { program.SystemPath = system })
	dir := t.TempDir()
	marker := filepath.Join(dir, "ran")
	run := "/bin/echo ran > " + marker
	c := &Confinement{Required: true, ReadOnly: []string{dir}}
	r := Run(context.Background(), Env{Dir: dir, Confine: c}, []Spec{{Name: "v", Run: run}})[0]
	if r.Passed || !r.Unconfined || !strings.Contains(r.Problem, "bwrap is not installed") {
		t.Errorf("required: %+v", r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("required: the command ran unconfined")
	}
	c.Required = false
	t.Setenv("PATH", "/usr/bin:/bin")
	program.SystemPath = system
	r = Run(context.Background(), Env{Dir: dir, Confine: c}, []Spec{{Name: "v", Run: run}})[0]
	if !r.Passed || r.Unconfined {
		t.Errorf("optional: %+v", r)
	}
}

// BenchmarkRun measures what bwrap adds to a validator: the same trivial
// command, plain and confined with a few read-only mounts.
func BenchmarkRun(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "mappings.toml"), nil, 0o644)
	os.MkdirAll(filepath.Join(dir, "validators"), 0o755)
	os.MkdirAll(filepath.Join(dir, "tmp", "validation"), 0o755)
	spec := Spec{Name: "true", Run: "true"}
	b.Run("plain", func(b *testing.B) {
		for b.Loop() {
			if r := Run(context.Background(), Env{Dir: dir}, []Spec{spec})[0]; !r.Passed {
				b.Fatal(r.Summary())
			}
		}
	})
	b.Run("confined", func(b *testing.B) {
		needBwrap(b)
		env := Env{Dir: dir, Confine: &Confinement{Required: true, ReadOnly: []string{
			filepath.Join(dir, "mappings.toml"), filepath.Join(dir, "validators"), filepath.Join(dir, "tmp", "validation"),
		}}}
		for b.Loop() {
			if r := Run(context.Background(), env, []Spec{spec})[0]; !r.Passed {
				b.Fatal(r.Summary(), r.Output)
			}
		}
	})
}

// A confined validator can still build: the Go cache (under HOME) and
// the module's own folder are writable, only the protected set is not.
func TestConfinedGoBuild(t *testing.T) {
	needBwrap(t)
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	env, dir := confinedProject(t)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/m\n\ngo 1.21\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { println(\"built\") }\n"), 0o644)
	r := Run(context.Background(), env, []Spec{{Name: "build", Run: goCmd + " build -o out/m . && out/m", Timeout: 2 * time.Minute}})[0]
	if !r.Passed || !strings.Contains(r.Output, "built") {
		t.Fatalf("a confined go build failed: %s\n%s", r.Summary(), r.Output)
	}
}

// The directories above the protected set cannot be moved or replaced
// from inside: the project root renamed away and copied back writable
// would leave the read-only mounts behind. What is in them stays writable.
func TestConfinedCommandCannotMoveAnAncestor(t *testing.T) {
	needBwrap(t)
	env, dir := confinedProject(t)
	parent := filepath.Dir(dir)
	// Each in a subshell, each must fail; a success prints MOVED.
	attacks := []string{
		`mv "$PWD" "$PWD.away"`,
		`mv "` + parent + `" "` + parent + `.away"`,
		`mv validators validators.away`,
		`mv tmp tmp.away`,
		`mv tmp/validation/.. tmp.away`,
		`rmdir "$PWD"`,
		`mkdir ../evil && mv -T ../evil "$PWD"`,
		`python3 -c 'import os; os.rename(os.getcwd(), os.getcwd() + ".py")'`,
		`unshare -Urm sh -c 'mv "$PWD" "$PWD.ns"'`,
	}
	var run strings.Builder
	for _, a := range attacks {
		run.WriteString("(" + a + ") 2>/dev/null && echo MOVED: '" + strings.ReplaceAll(a, "'", "") + "'\n")
	}
	run.WriteString(`echo made > scratch.txt && mkdir -p src/new && echo x > src/new/f && mv src/new src/renamed || exit 1
echo confined; exit 3`)
	r := Run(context.Background(), env, []Spec{{Name: "agent-tests", Run: run.String(), Timeout: 20 * time.Second}})[0]
	if r.ExitCode != 3 || !strings.Contains(r.Output, "confined") {
		t.Fatalf("the confined command did not run to its end: %+v", r)
	}
	if strings.Contains(r.Output, "MOVED") {
		t.Errorf("an ancestor moved:\n%s", r.Output)
	}
	for _, f := range []string{"mappings.toml", "validators/check.sh", "scratch.txt", "src/renamed/f"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A protected path that does not exist yet is listed before the run and
// found after it when the command created it.
func TestConfinedMissingPathAppears(t *testing.T) {
	needBwrap(t)
	env, dir := confinedProject(t)
	local := filepath.Join(dir, ".claude", "settings.local.json")
	env.Confine.ReadOnly = append(env.Confine.ReadOnly, local)
	missing := Missing(env.Confine.ReadOnly)
	if !slices.Contains(missing, local) || Appeared(missing) != nil {
		t.Fatalf("missing %v, appeared %v", missing, Appeared(missing))
	}
	r := Run(context.Background(), env, []Spec{{Name: "agent-tests", Run: `mkdir -p .claude && echo '{"disableAllHooks":true}' > .claude/settings.local.json`}})[0]
	if !r.Passed {
		t.Fatalf("%+v", r)
	}
	if got := Appeared(missing); !slices.Equal(got, []string{local}) {
		t.Errorf("appeared %v, want %s", got, local)
	}
}
