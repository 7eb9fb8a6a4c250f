package gate

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// goToolFindings warns, in a Go module that pins stopgate with the tool
// directive, of what can make go tool build another stopgate than the one
// published: a replace (of stopgate or of any module it uses), a go.work
// or vendor/. The marketplace plugin runs no such build, so with no bin/
// every stop halts; the agent can write all three. Which modules they
// touch is the plugin's to read from the build: this only says where to
// look, and the remedy, which reads none of them.
func goToolFindings(ws workspace) []finding {
	if !goTool(ws.root) {
		return nil
	}
	var locs []string
	data, _ := os.ReadFile(filepath.Join(ws.root, "go.mod"))
	for n, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "replace" {
			locs = append(locs, "go.mod:"+strconv.Itoa(n+1))
			break
		}
	}
	for _, name := range []string{"go.work", "vendor/modules.txt"} {
		if _, err := os.Stat(filepath.Join(ws.root, name)); err == nil {
			locs = append(locs, name)
		}
	}
	var fs []finding
	for _, loc := range locs {
		fs = append(fs, finding{loc: loc, warning: true,
			msg: "if this replaces, vendors or puts in a workspace stopgate or a module it uses, the stopgate plugin does not run the go tool it builds, so with no bin/ every stop halts",
			// GOWORK=off: in a workspace, go list -m names no version.
			hint: "install stopgate as published in bin/, which the hooks run first: " + goInstall(`"$PWD"/bin`, "@$(GOWORK=off go list -m -f '{{.Version}}' "+goModule+")")})
	}
	return fs
}
