// Package stopgate records what the stopgate commands know about the
// module they were built from.
package stopgate

import (
	"embed"
	"io/fs"
)

// cmdTree is the cmd/ folder of the source tree this build was made from: which
// commands exist decides which hooks `gate init` registers, so a hook is
// never registered for a program that was not built with it.
//
//go:embed cmd
var cmdTree embed.FS

// HasCommand reports whether cmd/name was part of this build.
func HasCommand(name string) bool {
	_, err := fs.Stat(cmdTree, "cmd/"+name)
	return err == nil
}
