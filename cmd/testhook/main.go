// Command testhook is stopgate's test runner: a tests file's actions are
// handed to the agent, its answers checked with the gate's validator engine,
// and a report written. It is a command-line tool and a UserPromptSubmit and
// Stop hook; see docs/testhook.md.
package main

import (
	"os"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/testhook"
)

func main() { os.Exit(cli.Main(hook.Testhook, testhook.Run, testhook.Usage)) }
