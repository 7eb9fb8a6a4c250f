// Command testhook is stopgate's hook-driven test runner (docs/testhook.md).
package main

import (
	"os"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/testhook"
)

func main() { os.Exit(cli.Main(hook.Testhook, testhook.Run, testhook.Usage)) }
