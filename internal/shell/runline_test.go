package shell

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/regular"
)

// first is the program a run line runs first: what the guard protects as
// the validator's program.
func first(run, root string) string {
	fs := Files(run, root)
	if len(fs) == 0 {
		return ""
	}
	return fs[0].Path
}

func TestProgram(t *testing.T) {
	root := projectDir(t)
	tests := map[string]string{
		"validators/check.sh":                             "validators/check.sh",
		"./validators/check.sh --flag":                    "validators/check.sh",
		`"$CLAUDE_PROJECT_DIR"/validators/x.sh`:           "validators/x.sh",
		`"$CLAUDE_PROJECT_DIR/validators/x.sh" --strict`:  "validators/x.sh",
		`${CLAUDE_PROJECT_DIR}/validators/x.sh`:           "validators/x.sh",
		"sh validators/x.sh":                              "validators/x.sh",
		"bash -e scripts/check.sh arg":                    "scripts/check.sh",
		"bash -o pipefail scripts/check.sh":               "scripts/check.sh",
		"python3 tools/check.py":                          "tools/check.py",
		"python3 -W ignore tools/check.py":                "tools/check.py",
		"FOO=1 timeout 5 validators/x.sh":                 "validators/x.sh",
		"env A=1 validators/x.sh":                         "validators/x.sh",
		"cd scripts && ./check.sh":                        "scripts/check.sh",
		"cd scripts; ./check.sh":                          "scripts/check.sh",
		`cd "$CLAUDE_PROJECT_DIR/scripts" && sh check.sh`: "scripts/check.sh",
		"(cd scripts && ./check.sh)":                      "scripts/check.sh",
		"sh -c 'validators/x.sh'":                         "validators/x.sh",
		"bash -c 'cd scripts && ./check.sh'":              "scripts/check.sh",
		"validators/x.sh && validators/y.sh":              "validators/x.sh",
		"set -e; validators/x.sh":                         "validators/x.sh",
		"go test ./...":                                   "",
		"make lint":                                       "",
		"python3 -c 'import x'":                           "",
		"python3 -m pytest":                               "",
		"/usr/local/bin/check":                            "",
		"../elsewhere/check.sh":                           "",
		"test -f output/joke.txt":                         "",
		`for t in tests/*.sh; do sh "$t" || exit 1; done`: "",
		"sh tests/*.sh":                                   "",
		"for v in validators/x.sh; do $v; done":           "validators/x.sh",
		"scripts/taskset":                                 "scripts/taskset", // a project program named like a wrapper
		"./scripts/chrt -v":                               "scripts/chrt",
		"validators/timeout 5 x":                          "validators/timeout",
		"bash - scripts/check.sh":                         "scripts/check.sh", // - ends a shell's options
		"python3 - data.json < /dev/null":                 "",                 // - is stdin, not data.json
	}
	for run, want := range tests {
		if want != "" {
			want = root + "/" + want
		}
		if got := first(run, root); got != want {
			t.Errorf("Files(%q)[0] = %q, want %q", run, got, want)
		}
	}
	if fs := Files("validators/x.sh && validators/y.sh", root); len(fs) != 2 || fs[1].Path != root+"/validators/y.sh" {
		t.Errorf("both programs of a && b: %v", fs)
	}
}

// TestSourced: the files a validator script sources are recorded with it,
// in any of the usual spellings; files outside the project are not.
func TestSourced(t *testing.T) {
	root := projectDir(t)
	write := func(rel, text string) {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("validators/lib.sh", ". ./validators/more.sh\n")
	write("validators/more.sh", "x=1\n")
	write("scripts/lib.sh", "helper() { :; }\n")
	write("scripts/env.sh", "A=1\n")
	write("validators/a.sh", "#!/bin/sh\n. ./validators/lib.sh\nsource /etc/profile\n")
	write("validators/b.sh", "#!/usr/bin/env bash\nDIR=$(cd \"$(dirname \"$0\")\" && pwd)\n. \"$DIR/lib.sh\"\n")
	write("scripts/check.sh", "#!/bin/bash\nsource lib.sh\nif [ -f env.sh ]; then . ./env.sh; fi\nfor i in 1 2 3; do :; done\n./build.sh && go test ./...\n")
	write("scripts/build.sh", "#!/bin/sh\n. ./lib.sh\n")
	write("scripts/c.sh", "#!/bin/bash\n. \"${BASH_SOURCE%/*}/lib.sh\"\n")
	write("tools/x.py", "import os\n")
	for run, want := range map[string][]string{
		"validators/a.sh":                       {"validators/a.sh", "validators/lib.sh", "validators/more.sh"},
		`"$CLAUDE_PROJECT_DIR"/validators/b.sh`: {"validators/b.sh", "validators/lib.sh", "validators/more.sh"},
		"cd scripts && ./check.sh":              {"scripts/check.sh", "scripts/lib.sh", "scripts/env.sh"},
		"bash scripts/c.sh":                     {"scripts/c.sh", "scripts/lib.sh"},
		"python3 tools/x.py":                    {"tools/x.py"},
		". scripts/env.sh && validators/a.sh":   {"scripts/env.sh", "validators/a.sh", "validators/lib.sh", "validators/more.sh"},
	} {
		var got []string
		for _, f := range Files(run, root) {
			got = append(got, strings.TrimPrefix(f.Path, root+"/"))
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("Files(%q) = %v, want %v", run, got, want)
		}
	}
}

// TestSourcedTooBig: a sourced file larger than the guard reads does not
// end the analysis: the programs run after it are still found, so padding
// a sourced file cannot free the validator's program from the guard.
func TestSourcedTooBig(t *testing.T) {
	root := projectDir(t)
	big := "#!/bin/sh\n" + strings.Repeat("# padding\n", MaxRead/10+1000) + "true\n"
	if err := os.WriteFile(filepath.Join(root, "validators/big.sh"), []byte(big), 0o755); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range Files(". validators/big.sh; validators/x.sh", root) {
		got = append(got, strings.TrimPrefix(f.Path, root+"/"))
	}
	if want := "validators/big.sh validators/x.sh"; strings.Join(got, " ") != want {
		t.Errorf("Files = %v, want %s", got, want)
	}
}

// TestBounded: a validator script that loops or builds text without end
// is analysed within the bounds, never a hang or a crash.
func TestBounded(t *testing.T) {
	root := projectDir(t)
	p := filepath.Join(root, "validators/loop.sh")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("#!/bin/sh\n. ./validators/lib.sh\nx=a; while :; do x=$x$x; done\n"), 0o755)
	os.WriteFile(filepath.Join(root, "validators/lib.sh"), []byte("while true; do :; done\nfor ((;;)); do y=1; done\n"), 0o644)
	start := time.Now()
	fs := Files("validators/loop.sh", root)
	if len(fs) != 2 {
		t.Errorf("Files = %v", fs)
	}
	// Stopped by its step bound, not by the deadline: the guard builds
	// its protected set on every call. A generous bound, seconds.
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the analysis took %v", d)
	}
}

// TestPlainProgramAgrees guards the fast path: wherever plainProgram
// answers, the dry run of the line gives the same program.
func TestPlainProgramAgrees(t *testing.T) {
	root := projectDir(t)
	runs := []string{
		"validators/check.sh", "validators/check.sh 00042", "./validators/check.sh --flag", "  validators/x.sh a b",
		"/usr/local/bin/check", "../elsewhere/check.sh", "validators/../../x.sh", root, "./",
		"validators/x.sh;rm -rf /", "validators/x.sh&&y", "validators/x.sh\targ", "bin/bash x.sh", "tools/python3 x.py",
		"usr/bin/env validators/x.sh", "a/timeout 5 validators/x.sh", "validators/x.sh $HOME", "v/x.sh 'a b'",
		"FOO=1 validators/x.sh", "~/x.sh", "validators/x*.sh", "go test ./...",
	}
	answered := 0
	for _, run := range runs {
		p, ok := plainProgram(run, root)
		if !ok {
			continue
		}
		answered++
		r := newResolver(run, root)
		r.top.run(run, r.Root, nil)
		want := ""
		if fs := r.files(); len(fs) > 0 {
			want = fs[0].Path
		}
		if p != want {
			t.Errorf("plainProgram(%q) = %q, the analysis says %q", run, p, want)
		}
	}
	if answered < 6 {
		t.Errorf("the fast path answered only %d of the plain run lines", answered)
	}
}

func projectDir(t *testing.T) string {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{"validators", "scripts", "tools"} {
		os.MkdirAll(filepath.Join(root, d), 0o755)
	}
	return root
}

// TestKey: run lines with one key resolve to the same files.
func TestKey(t *testing.T) {
	root := projectDir(t)
	os.WriteFile(filepath.Join(root, "validators/lib.sh"), []byte("x=1\n"), 0o644)
	os.WriteFile(filepath.Join(root, "validators/check.sh"), []byte("#!/bin/sh\n. ./validators/lib.sh\n"), 0o755)
	a, b := "validators/check.sh 00042", "validators/check.sh 00043 --strict"
	if Key(a) != Key(b) {
		t.Fatalf("Key(%q) = %q, Key(%q) = %q", a, Key(a), b, Key(b))
	}
	if fa, fb := Files(a, root), Files(b, root); len(fa) != 2 || fmt.Sprint(fa) != fmt.Sprint(fb) {
		t.Errorf("Files(%q) = %v, Files(%q) = %v", a, fa, b, fb)
	}
	if Key(`"$X"/check.sh 1`) == Key(`"$X"/check.sh 2`) {
		t.Errorf("a run line the shell must see is its own key")
	}
}

// A named pipe is refused unread, as the guard's dry run expects of it
// (errors.Is ErrNotRegular): its open would wait for a writer.
func TestReadFileRefusesPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "p")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadFile(p)
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, regular.ErrNotRegular) {
			t.Errorf("ReadFile(pipe) = %v, want ErrNotRegular", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadFile still waiting on the pipe after 10s")
	}
}

// TestStoppedLineNames: a run line whose analysis stops before its end
// (here a sourced loop, past the step bound; under load, the deadline)
// still has the programs its own commands name protected, in their usual
// spellings: the program after the source must not be left for the agent
// to rewrite.
func TestStoppedLineNames(t *testing.T) {
	root := projectDir(t)
	os.WriteFile(filepath.Join(root, "validators/lib.sh"), []byte("while :; do :; done\n"), 0o644)
	check := "validators/lib.sh scripts/check.sh"
	for _, tc := range []struct{ run, want string }{
		{". validators/lib.sh; validators/x.sh --strict", "validators/lib.sh validators/x.sh"},
		{`. validators/lib.sh; "$CLAUDE_PROJECT_DIR"/scripts/check.sh`, check},
		{`. validators/lib.sh; "${CLAUDE_PROJECT_DIR}/scripts/check.sh" --strict`, check},
		{`. validators/lib.sh; 'scripts/check.sh'`, check},
		{`. validators/lib.sh && timeout 5 scripts/check.sh`, check},
		{`. validators/lib.sh; env A=1 scripts/check.sh`, check},
		{`. validators/lib.sh; sh scripts/check.sh`, check},
		{`. validators/lib.sh; scripts/taskset`, "validators/lib.sh scripts/taskset"},
		{`. validators/lib.sh; timeout 60 scripts/prlimit`, "validators/lib.sh scripts/prlimit"},
		// After a cd, a program is named from there, and from the root too
		// (a subshell's cd ends with it): over-protection only.
		{`. validators/lib.sh && cd scripts && ./check.sh`, "validators/lib.sh scripts/check.sh check.sh"},
		{`. validators/lib.sh && cd scripts && bash check.sh`, "validators/lib.sh scripts/check.sh check.sh"},
	} {
		var got []string
		for _, f := range Files(tc.run, root) {
			got = append(got, strings.TrimPrefix(f.Path, root+"/"))
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("Files(%q) = %v, want %s", tc.run, got, tc.want)
		}
	}
}
