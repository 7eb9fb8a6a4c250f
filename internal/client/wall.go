package client

import (
	"io"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/settings"
)

// Wall is a client's second wall, which gate init turns on (docs/clients.md, "The second wall per client").
type Wall interface {
	File() string            // the project config the wall is in, slash-separated
	Ready(root string) error // refuses a config the wall cannot be merged into, before init writes
	// Up merges the wall over paths into the project's config, every other byte kept, and says so on w.
	Up(w io.Writer, root string, paths []Path) error
	// Check says what keeps the wall down; getenv is the user's environment (the client's own config).
	Check(getenv func(string) string, root string, paths []Path) []Finding
	// Remove is Up's inverse while the config is as init wrote it; gone: nothing is left, the file goes.
	Remove(data []byte, root string, paths []Path) (out []byte, r settings.Removal, gone bool, err error)
}

// Path is a protected path a wall keeps the agent from (guard.Protected).
type Path struct {
	Path string // absolute and clean, slash-separated
	Show string // relative to the root when inside it
	Dir  bool   // a folder even before it exists
}

// Finding is what a wall's check found, as gate check prints it.
type Finding struct {
	Loc     string // the file
	Warning bool
	Msg     string
	Hint    string
}

// mergeError names where a config a wall cannot be merged into is broken.
func mergeError(name string, err error) error {
	return cli.WithHint(settings.Named(name, err), "the file is left as it was: fix it by hand, then run gate init again")
}
