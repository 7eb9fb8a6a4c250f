// Command detect arms a prompt's validators when the agent reads a mapped prompt, and is the tamper guard.
package main

import (
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/detect"
	"github.com/stopgate/stopgate/internal/hook"
)

func main() { cli.Main(hook.Detect, detect.Run, detect.Usage) }
