// Command gate is stopgate's Stop / SubagentStop hook: it runs the pending
// validators and blocks the stop, with remediation text, until they pass.
package main

import (
	"os"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/gate"
	"github.com/stopgate/stopgate/internal/hook"
)

func main() { os.Exit(cli.Main(hook.Gate, gate.Run, gate.Usage)) }
