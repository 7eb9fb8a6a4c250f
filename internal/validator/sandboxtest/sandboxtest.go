// Package sandboxtest is for the tests of packages that run confined
// validators in-process: their test binary is the sandbox's runner too.
package sandboxtest

import (
	"fmt"
	"os"

	"github.com/stopgate/stopgate/internal/validator"
)

// ServeOr is the main of a test binary whose tests run confined
// validators: the sandbox starts the running program again with
// validator.SandboxArg, so the binary is then the runner, as the gate is;
// else it runs the tests (run).
func ServeOr(run func() int) int {
	if len(os.Args) > 1 && os.Args[1] == validator.SandboxArg {
		if err := validator.Serve(os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	return run()
}
