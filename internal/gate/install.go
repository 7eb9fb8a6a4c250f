package gate

import (
	"path/filepath"

	"github.com/stopgate/stopgate/internal/project"
)

// install is how a project installs stopgate: the method, the directory
// the hook programs are in (absolute), and the one command that installs
// them there, which the launcher's halt names on a machine without them.
//
// Only two methods here: "bin", the project's own folder (make install
// PREFIX=…), and "path", a folder outside the project (go install).
type install struct{ method, dir, command string }

// installFor returns how the programs in bin (relative to root, or
// absolute) are installed.
func installFor(root, bin string) install {
	dir := absFrom(root, bin)
	if rel, ok := project.Rel(root, dir); ok {
		prefix := filepath.ToSlash(filepath.Dir(rel))
		return install{method: "bin", dir: dir, command: "make install PREFIX=" + shellQuote(prefix)}
	}
	v := version()
	if v == "" {
		v = "latest"
	} else {
		v = "v" + v
	}
	return install{method: "path", dir: dir,
		command: "GOBIN=" + shellQuote(dir) + " go install github.com/stopgate/stopgate/cmd/...@" + v}
}
