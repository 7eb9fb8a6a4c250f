// Command testhook is stopgate's hook-driven test runner (docs/testhook.md).
package main

import (
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/testhook"
)

func main() { cli.Main(hook.Testhook, testhook.Run, testhook.Usage) }
