package testhook

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/cli"
)

// The runner's hot paths, in process: what each hook call and "testhook
// next" cost beyond starting the process. The whole-process wall time
// (beside a hello-world floor) is measured by make bench.

// benchProject is a project with the repo's mappings.toml, a 50-test
// suite and a running run for session "b" whose current test is handed out.
func benchProject(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	writeSuite(b, dir, 50)
	if data, err := os.ReadFile("../../mappings.toml"); err == nil {
		os.WriteFile(filepath.Join(dir, "mappings.toml"), data, 0o644)
	}
	for _, args := range [][]string{{"init", "--session", "b"}, {"next", "--session", "b"}} {
		if err := Run(benchEnv(dir, "", args...)); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

func benchEnv(dir, stdin string, args ...string) *cli.Env {
	return &cli.Env{
		Args: args, Stdin: strings.NewReader(stdin), Stdout: io.Discard, Stderr: io.Discard, Dir: dir,
		Getenv: func(k string) string {
			if k == "CLAUDE_PROJECT_DIR" {
				return dir
			}
			return ""
		},
	}
}

// BenchmarkNext is "testhook next" on a run whose test is handed out:
// config, lock, run file, answer.
func BenchmarkNext(b *testing.B) {
	dir := benchProject(b)
	for b.Loop() {
		if err := Run(benchEnv(dir, "", "next", "--session", "b")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkNextHook is the word "next" typed in Claude Code.
func BenchmarkNextHook(b *testing.B) {
	dir := benchProject(b)
	in := `{"session_id":"b","hook_event_name":"UserPromptSubmit","prompt":"next"}`
	for b.Loop() {
		if err := Run(benchEnv(dir, in)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPromptPassThrough is every other prompt: decided without
// touching the disk.
func BenchmarkPromptPassThrough(b *testing.B) {
	dir := benchProject(b)
	in := `{"session_id":"b","hook_event_name":"UserPromptSubmit","prompt":"refactor the parser and run the tests"}`
	for b.Loop() {
		if err := Run(benchEnv(dir, in)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStopNoRun is a Stop in a session without a run.
func BenchmarkStopNoRun(b *testing.B) {
	dir := benchProject(b)
	in := `{"session_id":"other","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"done"}`
	for b.Loop() {
		if err := Run(benchEnv(dir, in)); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoadRun is reading a 50-test run file.
func BenchmarkLoadRun(b *testing.B) {
	dir := benchProject(b)
	path := runFile(filepath.Join(dir, "tmp/validation"), "b")
	for b.Loop() {
		if st, err := loadRun(path); err != nil || st == nil {
			b.Fatal(err)
		}
	}
}
