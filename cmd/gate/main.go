// Command gate runs the armed validators at a stop, and is the CLI.
package main

import (
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/gate"
	"github.com/stopgate/stopgate/internal/hook"
)

func main() { cli.Main(hook.Gate, gate.Run, gate.Usage) }
