package gate

import (
	"path/filepath"

	"github.com/stopgate/stopgate/internal/project"
)

// install is how a project installs stopgate: the method, the directory
// the hook programs are in (as the hook commands name it, and here), and
// the one command that installs them there, which the launcher's halt
// names on a machine without them. The halt is committed with the
// settings, so the command names no path of this machine.
//
// Only two methods here: "bin", a folder of the project (make install
// PREFIX=…), and "path", a folder outside it (go install).
type install struct {
	method  string
	dir     string // the folder as a shell prefix: "$CLAUDE_PROJECT_DIR"/bin
	path    string // the folder here, absolute
	command string
}

// binInstall returns how the programs in bin (relative to root, or
// absolute) are installed.
func binInstall(root, bin string) install {
	prefix, dir := binPrefix(root, bin)
	if rel, ok := project.Rel(root, dir); ok {
		return install{method: "bin", dir: prefix, path: dir, command: "make install PREFIX=" + shellQuote(filepath.ToSlash(filepath.Dir(rel)))}
	}
	v := version()
	if v == "" {
		v = "latest"
	} else {
		v = "v" + v
	}
	return install{method: "path", dir: prefix, path: dir,
		command: "GOBIN=" + shellQuote(dir) + " go install github.com/stopgate/stopgate/cmd/...@" + v}
}
