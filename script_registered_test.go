package stopgate_test

import (
	"encoding/json"
	"os"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/stopgate/stopgate/internal/settings"
)

// registered FILE EVENT PROGRAM SCRIPT writes to SCRIPT the command line
// FILE registers for EVENT that runs PROGRAM, as the client would run it
// (sh -c): a script runs it with `exec sh SCRIPT`. FILE is Claude Code's
// shape (command) or Copilot CLI's (bash).
func cmdRegistered(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: registered FILE EVENT PROGRAM SCRIPT")
	}
	var f struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	ts.Check(json.Unmarshal([]byte(ts.ReadFile(args[0])), &f))
	for _, raw := range f.Hooks[args[1]] {
		var g struct {
			Hooks []struct{ Command string } `json:"hooks"`
			Bash  string                     `json:"bash"`
		}
		ts.Check(json.Unmarshal(raw, &g))
		cmds := []string{g.Bash}
		for _, h := range g.Hooks {
			cmds = append(cmds, h.Command)
		}
		for _, c := range cmds {
			if c != "" && settings.Program(c) == args[2] {
				ts.Check(os.WriteFile(ts.MkAbs(args[3]), []byte(c+"\n"), 0o644))
				return
			}
		}
	}
	ts.Fatalf("%s registers no %s for %s", args[0], args[2], args[1])
}
