// Package e2e runs the real Claude Code client against a scripted fake Messages API
// (package fakellm) to test hooks end to end: a test makes a throwaway Project, registers
// hooks in it the way a user would, runs one prompt and inspects the Result.
//
// The client is not vendored: scripts/install-claude puts the pinned version under
// tmp/e2e/claude, and tests skip when it is absent.
//
// Scenarios run one after another, not with t.Parallel: the client tolerates parallel
// runs, but on a 2-core machine they triple the hook durations the client reports, which
// the suite logs (Result.CheckHooks). One run takes about a second.
package e2e

import (
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// claudeRel is where scripts/install-claude puts the native client, from the module root.
const claudeRel = "tmp/e2e/claude/node_modules/@anthropic-ai/claude-code-linux-x64/claude"

// Claude returns the path of the claude binary: $STOPGATE_CLAUDE, else the one
// scripts/install-claude installed. It skips t when there is none.
func Claude(t testing.TB) string {
	t.Helper()
	path := os.Getenv("STOPGATE_CLAUDE")
	if path == "" {
		path = filepath.Join(Root(t), claudeRel)
	}
	if _, err := os.Stat(path); err != nil {
		t.Skip("claude binary not installed: run `make e2e` (or scripts/install-claude) to run the end-to-end suite")
	}
	return path
}

var root struct {
	once sync.Once
	dir  string
}

// Root returns the module's root directory: the nearest parent of the working
// directory (a test's package directory) that holds go.mod.
func Root(t testing.TB) string {
	t.Helper()
	root.once.Do(func() {
		dir, err := os.Getwd()
		if err != nil {
			return
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				root.dir = dir
				return
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return
			}
			dir = parent
		}
	})
	if root.dir == "" {
		t.Fatal("e2e: no go.mod above the working directory")
	}
	return root.dir
}
