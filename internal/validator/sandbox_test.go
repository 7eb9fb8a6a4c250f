package validator

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/trust/program"
)

// countedBwrap puts on PATH a bwrap that logs each start to the file it
// returns and then runs the real one, or fails as bwrap does when the
// sandbox it is asked for runs the runner and failRunner is set. The
// process's probe is forgotten meanwhile, as in a new gate.
func countedBwrap(t *testing.T, failRunner bool) string {
	t.Helper()
	real, err := Bwrap()
	if err != nil {
		t.Skipf("no confinement here: %v", err)
	}
	saved, savedErr := probe.path, probe.err
	probe.once = sync.Once{}
	probe.made.Store(false)
	t.Cleanup(func() {
		probe.once = sync.Once{}
		probe.once.Do(func() { probe.path, probe.err = saved, savedErr })
		probe.made.Store(true)
	})
	bin := t.TempDir()
	log := filepath.Join(bin, "starts")
	script := "#!/bin/sh\necho \"$*\" >> " + log + "\n"
	if failRunner {
		script += "case \"$*\" in *" + SandboxArg + "*) echo 'bwrap: Can'\"'\"'t mount proc on /newroot/proc: Operation not permitted' >&2; exit 1;; esac\n"
	}
	script += "exec " + real + " \"$@\"\n"
	os.WriteFile(filepath.Join(bin, "bwrap"), []byte(script), 0o755)
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	systemFirst(t, bin)
	return log
}

// systemFirst puts dir before the system's folders (program.SystemPath),
// where the gate finds bwrap, for the test.
func systemFirst(t *testing.T, dir string) {
	saved := program.SystemPath
	program.SystemPath = append([]string{dir}, saved...)
	t.Cleanup(func() { program.SystemPath = saved })
}

func starts(t *testing.T, log string) []string {
	data, _ := os.ReadFile(log)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// A stop's confined validators share one sandbox, started once with no
// probe before it, and each keeps its own verdict, timeout, exit code and
// output; file checks run beside it, outside.
func TestOneSandboxForManyValidators(t *testing.T) {
	log := countedBwrap(t, false)
	env, dir := confinedProject(t)
	os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("ok\n"), 0o644)
	specs := []Spec{{Name: "file", File: "ok.txt"}}
	for i := range 12 {
		specs = append(specs, Spec{Name: "pass", Run: "echo pass $$; (: > mappings.toml) 2>/dev/null && exit 9; exit 0"})
		specs = append(specs, Spec{Name: "fail", Run: "echo failing; exit 4"})
		if i%4 == 0 {
			specs = append(specs, Spec{Name: "hang", Run: hang, Timeout: time.Second})
		}
	}
	start := time.Now()
	results := Run(context.Background(), env, specs)
	if time.Since(start) > 30*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
	if got := starts(t, log); len(got) != 1 || !strings.Contains(got[0], SandboxArg) {
		t.Errorf("bwrap started %d times, want once, for the sandbox: %q", len(got), got)
	}
	pids := map[string]bool{}
	for i, r := range results {
		if r.Name != specs[i].Name {
			t.Fatalf("result %d is %q, want %q", i, r.Name, specs[i].Name)
		}
		switch r.Name {
		case "file":
			if !r.Passed || r.Confined {
				t.Errorf("file: %+v", r)
			}
		case "pass":
			pids[r.Output] = true
			if !r.Passed || r.ExitCode != 0 || !r.Confined || r.Problem != "" || r.Duration <= 0 {
				t.Errorf("pass: %+v", r)
			}
		case "fail":
			if r.Passed || r.ExitCode != 4 || r.Output != "failing\n" || !r.Confined || r.Problem != "" {
				t.Errorf("fail: %+v", r)
			}
		case "hang":
			if r.Passed || !r.TimedOut || r.ExitCode != -1 || !strings.Contains(r.Problem, "timed out after 1s") || !r.Confined {
				t.Errorf("hang: %+v", r)
			}
		}
	}
	if len(pids) != 12 {
		t.Errorf("%d distinct passing outputs, want 12: %v", len(pids), pids)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "mappings.toml")); string(data) != "[settings]\n" {
		t.Errorf("mappings.toml changed: %q", data)
	}
	if left := sleepers(t); left != "" {
		t.Errorf("processes left: %s", left)
	}
}

// A validator cannot forge another's verdict. Report lines in its output
// are its output: it fails, its peer's failure stands.
func TestSandboxOutputCannotForgeAReport(t *testing.T) {
	needBwrap(t)
	env, _ := confinedProject(t)
	forge := `printf '{"Nonce":"","I":1,"Output":null,"Result":{"Passed":true,"ExitCode":0}}\n{"Nonce":"","End":true}\n'; exit 1`
	results := Run(context.Background(), env, []Spec{
		{Name: "forger", Run: forge},
		{Name: "victim", Run: "sleep 0.5; exit 7"},
	})
	forger, victim := results[0], results[1]
	if forger.Passed || forger.ExitCode != 1 || !strings.HasPrefix(forger.Output, `{"Nonce":"","I":1,`) || forger.Problem != "" {
		t.Errorf("forger: %+v", forger)
	}
	if victim.Passed || victim.ExitCode != 7 || victim.Problem != "" {
		t.Errorf("victim: %+v", victim)
	}
}

// Nor through /proc: the runner's files are closed to it (non-dumpable), and
// a line it writes on bwrap's copy of that stdout, without the nonce,
// voids the stop's report: every validator fails, none passes.
func TestSandboxReportCannotBeForgedThroughProc(t *testing.T) {
	needBwrap(t)
	env, dir := confinedProject(t)
	stolen := filepath.Join(dir, "stolen")
	forge := `
readlink /proc/$PPID/fd/1 > /dev/null 2>&1 && echo "runner's fds open" >> ` + stolen + `
for p in /proc/[0-9]*; do
	[ "$p" = /proc/$$ ] && continue
	cat "$p/fd/0" >> ` + stolen + ` 2>/dev/null
	for fd in 1 2 3 4 5 6 7 8 9; do
		printf '{"Nonce":"","I":1,"Output":null,"Result":{"Passed":true}}\n' 2>/dev/null > "$p/fd/$fd"
	done
done
exit 0`
	results := Run(context.Background(), env, []Spec{
		{Name: "forger", Run: forge, Timeout: 20 * time.Second},
		{Name: "victim", Run: "sleep 1; exit 7", Timeout: 20 * time.Second},
	})
	for _, r := range results {
		if r.Passed || r.Problem == "" {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
	if data, _ := os.ReadFile(stolen); strings.Contains(string(data), "Nonce") || strings.Contains(string(data), "Specs") || strings.Contains(string(data), "open") {
		t.Errorf("the runner was reached from inside: %q", data)
	}
}

// A runner killed mid-stop, here by a validator, fails every confined
// validator of the stop, those that had already passed included.
func TestSandboxRunnerKilledFailsClosed(t *testing.T) {
	needBwrap(t)
	env, _ := confinedProject(t)
	results := Run(context.Background(), env, []Spec{
		{Name: "quick", Run: "true"},
		{Name: "killer", Run: "sleep 0.5; kill -9 $PPID; sleep 5"},
		{Name: "slow", Run: "sleep 5"},
	})
	for _, r := range results {
		if r.Passed || r.Problem == "" || !r.Confined || r.ExitCode != -1 {
			t.Errorf("%s: %+v", r.Name, r)
		}
		if !strings.Contains(r.Problem, "runner failed") {
			t.Errorf("%s: problem %q", r.Name, r.Problem)
		}
	}
	if left := sleepers(t); left != "" {
		t.Errorf("processes left: %s", left)
	}
}

// What the gate accepts of the runner's report: its lines, once each, with
// the nonce, between hello and end; anything else voids it.
func TestReadReport(t *testing.T) {
	const n = "abc"
	hello := `{"Nonce":"abc","Hello":true}` + "\n"
	ok := func(i int) string {
		return `{"Nonce":"abc","I":` + string(rune('0'+i)) + `,"Output":"aGk=","Result":{"Passed":true}}` + "\n"
	}
	end := `{"Nonce":"abc","End":true}` + "\n"
	for _, tc := range []struct {
		name, in string
		hello    bool
		valid    bool
	}{
		{"whole", hello + ok(1) + ok(0) + end, true, true},
		{"nothing", "", false, false},
		{"no hello", ok(0) + ok(1) + end, false, false},
		{"no end", hello + ok(0) + ok(1), true, false},
		{"early end", hello + ok(0) + end, true, false},
		{"twice", hello + ok(0) + ok(0) + ok(1) + end, true, false},
		{"out of range", hello + ok(0) + ok(2) + ok(1) + end, true, false},
		{"wrong nonce", hello + ok(0) + strings.Replace(ok(1), "abc", "abd", 1) + end, true, false},
		{"no nonce", hello + ok(0) + strings.Replace(ok(1), `"Nonce":"abc",`, "", 1) + end, true, false},
		{"unknown field", hello + ok(0) + strings.Replace(ok(1), `"I"`, `"X":1,"I"`, 1) + end, true, false},
		{"two values on a line", hello + ok(0) + strings.TrimSuffix(ok(1), "\n") + ok(1) + end, true, false},
		{"after end", hello + ok(0) + ok(1) + end + ok(1), true, true},
		{"too long", hello + ok(0) + `{"Nonce":"abc","I":1,"Output":"` + strings.Repeat("A", 4000) + `"}` + "\n" + end, true, false},
		{"torn", hello + ok(0) + ok(1)[:20], true, false},
	} {
		results, hello, err := readReport(strings.NewReader(tc.in), n, 2, 1000)
		if hello != tc.hello || (err == nil) != tc.valid {
			t.Errorf("%s: hello %v, err %v", tc.name, hello, err)
		}
		if tc.valid && (results[0].Output != "hi" || !results[1].Passed || !results[1].Confined) {
			t.Errorf("%s: %+v", tc.name, results)
		}
	}
}

// Where bwrap cannot make any sandbox, a stop runs as it did before one
// per stop: unconfined, or not at all when confinement is required. Where
// it works but the stop's own sandbox does not start (its mounts), the
// validators fail: an agent that breaks a mount gains no unconfined run.
func TestSandboxThatDoesNotStart(t *testing.T) {
	log := countedBwrap(t, true)
	env, dir := confinedProject(t)
	env.Confine.Required = false
	marker := filepath.Join(dir, "ran")
	r := Run(context.Background(), env, []Spec{{Name: "v", Run: "echo ran > " + marker}})[0]
	if r.Passed || r.Unconfined || !r.Confined || !strings.Contains(r.Problem, "did not start") || !strings.Contains(r.Problem, "Can't mount proc") {
		t.Errorf("a sandbox that did not start: %+v", r)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("the command ran")
	}
	if got := starts(t, log); len(got) != 2 {
		t.Errorf("bwrap started %d times, want the sandbox and then the probe: %q", len(got), got)
	}

	// No sandbox at all here: the probe fails too.
	os.WriteFile(filepath.Join(filepath.Dir(log), "bwrap"), []byte("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n"), 0o755)
	probe.once = sync.Once{}
	probe.made.Store(false)
	r = Run(context.Background(), env, []Spec{{Name: "v", Run: "echo ran > " + marker}})[0]
	if !r.Passed || r.Confined || r.Unconfined {
		t.Errorf("optional, no sandbox: %+v", r)
	}
	probe.once = sync.Once{}
	probe.made.Store(false)
	env.Confine.Required = true
	r = Run(context.Background(), env, []Spec{{Name: "v", Run: "exit 0"}})[0]
	if r.Passed || !r.Unconfined || !strings.Contains(r.Problem, "No permissions to create new namespace") {
		t.Errorf("required, no sandbox: %+v", r)
	}
}

// The stop's deadline kills every validator still running in the sandbox,
// each reported timed out with the reason, whatever its own timeout.
func TestSandboxDeadline(t *testing.T) {
	needBwrap(t)
	env, _ := confinedProject(t)
	env.Deadline, env.DeadlineWhy = time.Now().Add(1500*time.Millisecond), "the hook's deadline"
	start := time.Now()
	results := Run(context.Background(), env, []Spec{
		{Name: "quick", Run: "exit 0"},
		{Name: "hang1", Run: hang, Timeout: time.Minute},
		{Name: "hang2", Run: hang + " & " + hang, Timeout: time.Hour},
	})
	if time.Since(start) > 30*time.Second {
		t.Fatalf("took %s", time.Since(start))
	}
	if !results[0].Passed || !results[0].Confined {
		t.Errorf("quick: %+v", results[0])
	}
	for _, r := range results[1:] {
		if r.Passed || !r.TimedOut || !r.Confined || !strings.HasSuffix(r.Problem, ": the hook's deadline") {
			t.Errorf("%s: %+v", r.Name, r)
		}
	}
	if left := sleepers(t); left != "" {
		t.Errorf("processes left: %s", left)
	}
}

// TestServeStartsNoWatchdog: the sandbox's runner starts no watchdog shell
// beside the validators (its pid namespace ends them all): a same-uid
// process the checked code could see and signal.
func TestServeStartsNoWatchdog(t *testing.T) {
	req, err := json.Marshal(boxRequest{Nonce: "n", Env: Env{Dir: t.TempDir()}, Specs: []Spec{{Run: `ps -o args= --ppid $PPID`}}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Serve(bytes.NewReader(req), &out); err != nil {
		t.Fatal(err)
	}
	for sc := bufio.NewScanner(&out); sc.Scan(); {
		var l boxLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(l.Output), "while read p") {
			t.Errorf("a watchdog runs beside the sandbox's validators:\n%s", l.Output)
		}
	}
}
