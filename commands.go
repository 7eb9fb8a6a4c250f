// Package stopgate records what the stopgate commands know about the
// module they were built from.
package stopgate

import (
	"embed"
	"io/fs"
)

// cmdTree is the cmd/ folder as it was when this build was made: which
// commands exist decides which hooks `gate init` registers, so a hook is
// never registered for a program that was not built with it.
//
//go:embed cmd
var cmdTree embed.FS

// Commands returns the names of the commands under cmd/ in this build,
// sorted.
func Commands() []string {
	des, _ := fs.ReadDir(cmdTree, "cmd")
	var names []string
	for _, de := range des {
		if de.IsDir() {
			names = append(names, de.Name())
		}
	}
	return names
}

// HasCommand reports whether cmd/name was part of this build.
func HasCommand(name string) bool {
	_, err := fs.Stat(cmdTree, "cmd/"+name)
	return err == nil
}
