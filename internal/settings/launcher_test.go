package settings

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/cli"
)

func TestLauncherRoundTrip(t *testing.T) {
	for _, tt := range []struct {
		cands []string
		args  string
		prog  string
		paths []string
	}{
		{[]string{`"$CLAUDE_PROJECT_DIR"/bin/gate`}, "", "gate", []string{"$CLAUDE_PROJECT_DIR/bin/gate"}},
		{[]string{`'/home/o'\''neil/bin/detect'`, `"$CLAUDE_PROJECT_DIR"/node_modules/@stopgate/*/bin/detect`}, "--client codex", "detect",
			[]string{"/home/o'neil/bin/detect", "$CLAUDE_PROJECT_DIR/node_modules/@stopgate/*/bin/detect"}},
	} {
		for _, cmd := range []string{Launcher(tt.cands, tt.args, `{"continue":false,"stopReason":"it's missing"}`, ""), Exec(tt.cands, tt.args)} {
			roundTrip(t, cmd, tt.cands, tt.prog, tt.args, tt.paths)
		}
	}
	if _, ok := Candidates(`"$CLAUDE_PROJECT_DIR"/bin/gate`); ok {
		t.Error("a plain command is no launcher")
	}
}

// roundTrip checks that a launcher's text gives back what made it, and that today's forms are not flagged earlier.
func roundTrip(t *testing.T, cmd string, cands []string, prog, args string, paths []string) {
	t.Helper()
	if Earlier(cmd) {
		t.Errorf("Earlier(%q): today's launcher flagged", cmd)
	}
	if words, ok := Candidates(cmd); !ok || !slices.Equal(words, cands) {
		t.Errorf("Candidates(%q) = %q, %v; want %q", cmd, words, ok, cands)
	}
	if got := Program(cmd); got != prog {
		t.Errorf("Program(%q) = %q, want %q", cmd, got, prog)
	}
	if got := Paths(cmd); !slices.Equal(got, paths) {
		t.Errorf("Paths(%q) = %q, want %q", cmd, got, paths)
	}
	if got := Args(cmd); got != args {
		t.Errorf("Args(%q) = %q, want %q", cmd, got, args)
	}
}

// TestLauncherEarlierForm: the launcher earlier versions of gate init
// wrote (exec "$p") stays in users' settings files; gate check, gate
// uninstall and the tamper guard must still know it for what it runs.
func TestLauncherEarlierForm(t *testing.T) {
	old := `for p in "$CLAUDE_PROJECT_DIR"/bin/gate /home/u/go/bin/gate; do [ -x "$p" ] && exec "$p" --timeout 600; done; printf '%s\n' '{"continue":false,"stopReason":"old words"}'`
	cands := []string{`"$CLAUDE_PROJECT_DIR"/bin/gate`, "/home/u/go/bin/gate"}
	if words, ok := Candidates(old); !ok || !slices.Equal(words, cands) {
		t.Errorf("Candidates = %q, %v; want %q", words, ok, cands)
	}
	if got := Args(old); got != "--timeout 600" {
		t.Errorf("Args = %q", got)
	}
	if got := Paths(old); !slices.Equal(got, []string{"$CLAUDE_PROJECT_DIR/bin/gate", "/home/u/go/bin/gate"}) {
		t.Errorf("Paths = %q", got)
	}
	if got, want := Shown(old), `"$CLAUDE_PROJECT_DIR"/bin/gate or /home/u/go/bin/gate --timeout 600 if installed`; got != want {
		t.Errorf("Shown = %q, want %q", got, want)
	}
	if !SameRun(old, Launcher(cands, "--timeout 600", `{"continue":false,"stopReason":"new words"}`, "")) {
		t.Error("the earlier launcher is not the same run as today's of the same candidates and arguments")
	}
	if SameRun(old, Launcher(cands, "--timeout 60", "", "")) || SameRun(old, Launcher(cands[:1], "--timeout 600", "", "")) {
		t.Error("launchers of other arguments or candidates are the same run")
	}
	if !Earlier(old) {
		t.Error("the earlier launcher is not flagged")
	}
	noArgs := `for p in "$CLAUDE_PROJECT_DIR"/bin/detect; do [ -x "$p" ] && exec "$p"; done; exit 0`
	if words, ok := Candidates(noArgs); !ok || len(words) != 1 || Args(noArgs) != "" || Program(noArgs) != "detect" {
		t.Errorf("Candidates(%q) = %q, %v; Args %q", noArgs, words, ok, Args(noArgs))
	}
}

// shells are the POSIX shells installed here, as a client runs a hook's
// command line: sh (dash on Debian, bash on macOS), dash, bash and bash
// in POSIX mode.
func shells(t *testing.T) [][]string {
	var out [][]string
	for _, sh := range [][]string{{"sh", "-c"}, {"dash", "-c"}, {"bash", "-c"}, {"bash", "--posix", "-c"}} {
		if _, err := exec.LookPath(sh[0]); err == nil {
			out = append(out, sh)
		}
	}
	if len(out) == 0 {
		t.Skip("no POSIX shell")
	}
	return out
}

// runShell runs cmd in sh, stdin given, and returns its stdout, stderr and
// exit status.
func runShell(t *testing.T, sh []string, cmd, stdin string) (stdout, stderr string, code int) {
	t.Helper()
	c := exec.Command(sh[0], append(sh[1:], cmd)...)
	c.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	err := c.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", sh, err)
	}
	return out.String(), errb.String(), code
}

func writeExec(t *testing.T, path, text string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// The launcher runs in a real POSIX shell: the fallback, quotes and all,
// when no candidate is executable; the program with its arguments when one is.
func TestLauncherRuns(t *testing.T) {
	dir := t.TempDir()
	fallback := `{"stopReason":"it's 100% missing"}`
	for _, sh := range shells(t) {
		cmd := Launcher([]string{filepath.Join(dir, "nope"), filepath.Join(dir, "*", "gate")}, "--x 'a b'", fallback, "")
		if out, _, code := runShell(t, sh, cmd, ""); code != 0 || out != fallback+"\n" {
			t.Errorf("%v, missing: %q, exit %d; want the fallback", sh, out, code)
		}
		if out, _, code := runShell(t, sh, Launcher([]string{"/bin/echo"}, "--x 'a b'", fallback, ""), ""); code != 0 || out != "--x a b\n" {
			t.Errorf("%v, present: %q, exit %d", sh, out, code)
		}
		if out, _, code := runShell(t, sh, Launcher([]string{filepath.Join(dir, "nope")}, "", "", ""), ""); code != 0 || out != "" {
			t.Errorf("%v, no fallback: %q, exit %d; want silence and exit 0", sh, out, code)
		}
	}
}

// stopInput is a Stop hook's input, as Claude Code sends it.
const stopInput = `{"session_id":"s1","transcript_path":"/p/t.jsonl","cwd":"/p","hook_event_name":"Stop","stop_hook_active":false}`

// unrunnable lays out, in dir, programs that are executable by their mode
// and not empty, but that the kernel will not start.
func unrunnable(t *testing.T, dir string) map[string]string {
	// An ELF header for a machine no kernel runs (e_machine 0xffff).
	foreign := append([]byte("\x7fELF\x02\x01\x01"), make([]byte, 57)...)
	foreign[16], foreign[18], foreign[19] = 2, 0xff, 0xff
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := os.ReadFile(self)
	if err != nil {
		t.Fatal(err)
	}
	noexec := filepath.Join(dir, "a directory")
	if err := os.Mkdir(noexec, 0o755); err != nil {
		t.Fatal(err)
	}
	return map[string]string{
		"built for another platform":   writeExec(t, filepath.Join(dir, "foreign"), string(foreign)),
		"a truncated binary":           writeExec(t, filepath.Join(dir, "truncated"), string(bin[:200])),
		"a #! naming a missing shell":  writeExec(t, filepath.Join(dir, "badinterp"), "#!/nonexistent/sh\nexit 0\n"),
		"empty (sh runs it: exit 0)":   writeExec(t, filepath.Join(dir, "empty"), ""),
		"a directory (EACCES, noexec)": noexec,
	}
}

// TestLauncherCannotRun is the attack: the program is there and executable
// by its mode, but cannot run. exec left the shell's 126 or 127 as the
// hook's answer, a non-blocking error, so an armed stop passed unjudged.
// The launcher answers the fallback, exit 0, in every shell; a later
// candidate that can run gets the hook input whole and answers as itself.
func TestLauncherCannotRun(t *testing.T) {
	dir := t.TempDir()
	halt := `{"continue":false,"stopReason":"stopgate is not installed on this machine: bin/gate is missing or cannot run"}`
	works := writeExec(t, filepath.Join(dir, "works"), "#!/bin/sh\ncat\necho \"judged $*\" >&2\nexit 2\n")
	for _, sh := range shells(t) {
		for what, path := range unrunnable(t, t.TempDir()) {
			q := cli.ShellQuote(path)
			out, stderr, code := runShell(t, sh, Launcher([]string{q}, "--timeout 600", halt, ""), stopInput)
			if code != 0 || out != halt+"\n" {
				t.Errorf("%v, %s: stdout %q, exit %d (stderr %q); want the halt, exit 0", sh, what, out, code, stderr)
			}
			out, _, code = runShell(t, sh, Launcher([]string{q}, "", "", ""), stopInput)
			if code != 0 || out != "" {
				t.Errorf("%v, %s, no fallback: stdout %q, exit %d; want silence, exit 0", sh, what, out, code)
			}
			out, stderr, code = runShell(t, sh, Launcher([]string{q, cli.ShellQuote(works)}, "--timeout 600", halt, ""), stopInput)
			if code != 2 || out != stopInput || !strings.HasSuffix(stderr, "judged --timeout 600\n") {
				t.Errorf("%v, %s, then a program that runs: stdout %q, stderr %q, exit %d; want the input whole, its stderr, exit 2", sh, what, out, stderr, code)
			}
		}
	}
}

// TestLauncherPassesThrough: what a program that runs answers is the
// hook's answer, unchanged: stdout, stderr, and exit 0, 1 or 2.
func TestLauncherPassesThrough(t *testing.T) {
	dir := t.TempDir()
	prog := writeExec(t, filepath.Join(dir, "prog"), "#!/bin/sh\nread -r in\nprintf '%s|%s' \"$in\" \"$*\"\nprintf 'said %s' \"$1\" >&2\nexit \"$1\"\n")
	for _, sh := range shells(t) {
		for _, status := range []string{"0", "1", "2"} {
			out, stderr, code := runShell(t, sh, Launcher([]string{cli.ShellQuote(prog)}, status+" 'a b'", `{"continue":false}`, ""), stopInput)
			if out != stopInput+"|"+status+" a b" || stderr != "said "+status || code != int(status[0]-'0') {
				t.Errorf("%v, exit %s: stdout %q, stderr %q, exit %d", sh, status, out, stderr, code)
			}
		}
	}
}

// TestLauncherKilledProgram: a program killed by a signal (status above
// 127) is answered for with the fallback, and no later candidate runs on
// the input it may have read.
func TestLauncherKilledProgram(t *testing.T) {
	dir := t.TempDir()
	halt := `{"continue":false,"stopReason":"cannot run"}`
	marker := filepath.Join(dir, "ran")
	for _, sig := range []string{"KILL", "SEGV"} {
		killed := writeExec(t, filepath.Join(dir, "killed-"+sig), "#!/bin/sh\nkill -"+sig+" $$\n")
		next := writeExec(t, filepath.Join(dir, "next"), "#!/bin/sh\n: > "+cli.ShellQuote(marker)+"\n")
		for _, sh := range shells(t) {
			out, _, code := runShell(t, sh, Launcher([]string{cli.ShellQuote(killed), cli.ShellQuote(next)}, "", halt, ""), stopInput)
			if code != 0 || out != halt+"\n" {
				t.Errorf("%v, SIG%s: stdout %q, exit %d; want the halt, exit 0", sh, sig, out, code)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Errorf("%v, SIG%s: the next candidate ran after a killed one", sh, sig)
				os.Remove(marker)
			}
		}
	}
}

// TestLauncherExecs: exec's form runs the program in the shell's place (the
// shell's fork saved on every event): the program's parent is the shell's.
// A candidate that cannot start ends the hook in silence, exit 0 (dash's
// EXIT trap), or bash tries the next (execfail); never a status of the
// shell's own.
func TestLauncherExecs(t *testing.T) {
	dir := t.TempDir()
	parent := writeExec(t, filepath.Join(dir, "parent"), "#!/bin/sh\necho $PPID\n")
	works := writeExec(t, filepath.Join(dir, "works"), "#!/bin/sh\ncat\n")
	want := strconv.Itoa(os.Getpid()) + "\n"
	for _, sh := range shells(t) {
		if out, _, code := runShell(t, sh, Exec([]string{cli.ShellQuote(parent)}, ""), ""); code != 0 || out != want {
			t.Errorf("%v: the program's parent %q, exit %d; want the test's, %q: no fork", sh, out, code, want)
		}
		version, _, _ := runShell(t, sh, "echo ${BASH_VERSION-}", "")
		bash := version != "\n"
		for what, path := range unrunnable(t, t.TempDir()) {
			out, _, code := runShell(t, sh, Exec([]string{cli.ShellQuote(path), cli.ShellQuote(works)}, ""), stopInput)
			next := bash || strings.HasPrefix(what, "empty") // an empty file is passed over unrun
			if next && (code != 0 || out != stopInput) || !next && (code != 0 || out != "") {
				t.Errorf("%v, %s, then a program that runs: stdout %q, exit %d", sh, what, out, code)
			}
		}
	}
}
