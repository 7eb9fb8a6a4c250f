package gate

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/buildinfo"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/project"
)

// install is how stopgate is installed for a project: what gate init
// registers, and what a machine without it must run.
type install struct {
	method  string // "npm", "go tool", "bin" (a folder of the project), "path" (one outside it)
	dir     string // the bin dir as a shell prefix, e.g. "$CLAUDE_PROJECT_DIR"/bin
	path    string // the directory dir names here
	command string // the one command that installs it here
}

// npmBin is where npm puts the platform package's programs in a project:
// a glob, since npm installs exactly one platform package and the
// settings are shared by machines of every platform.
const npmBin = guard.NpmScope + "/*/bin"

// installOf says how the gate at exe (os.Executable, symlinks resolved)
// is installed for the project at root, when --bin was not given: from
// npm packages, the project's or global; otherwise bin, the --bin default,
// as make install PREFIX=. puts it. A gate found on PATH is not
// registered by its path: that path is one machine's, and the settings are
// the team's.
func installOf(root, bin, exe string) install {
	dir := filepath.Dir(exe)
	if pkg, ok := npmPlatformDir(dir); ok {
		nodeModules := filepath.Dir(filepath.Dir(pkg))
		if filepath.Dir(nodeModules) == root {
			return npmProject(dir)
		}
		return install{method: "npm", dir: cli.ShellQuote(dir), path: dir, command: "npm install -g stopgate"}
	}
	if goTool(root) {
		// go tool costs hundreds of milliseconds a call (docs/architecture.md, "What a registered hook costs"):
		// the hooks run the programs go install puts in bin, at the
		// version go.mod pins.
		inst := binInstall(root, bin)
		if rel, ok := project.Rel(root, inst.path); ok {
			inst.method = "go tool"
			inst.command = goInstall(`"$PWD"/`+cli.ShellQuote(filepath.ToSlash(rel)), goPinned)
		}
		return inst
	}
	return binInstall(root, bin)
}

// routes are the installs gate init may have registered for the project
// at root: bin (the go.mod tool route's folder too), the project's npm
// packages, and wherever this gate runs from (a global npm package, a
// folder outside the project). gate uninstall compares the settings with
// what wanted writes for each, so it knows every launcher init writes.
func routes(root, bin string) []install {
	return []install{binInstall(root, bin), npmProject(""), installOf(root, bin, self())}
}

// npmDirs are the programs' folders of every released platform package in
// the project at root: the wall gate init writes names the one of the
// machine it ran on.
func npmDirs(root string) []string {
	var out []string
	for _, pkg := range npmPlatforms {
		out = append(out, filepath.Join(root, filepath.FromSlash(guard.NpmScope), pkg, "bin"))
	}
	return out
}

// npmPlatforms are the released platform packages (dist.Platforms, which
// the hook programs do not link: install_test.go keeps the two equal).
var npmPlatforms = []string{"linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"}

// shown is the program prog as a missing one is named: on the project's
// npm route, in the platform package of the machine the launcher runs on.
func (in install) shown(root, prog string) string {
	if in.dir == npmProject("").dir {
		return guard.NpmScope + "/" + platform + "/bin/" + prog
	}
	return project.Display(root, filepath.Join(in.path, prog))
}

// prefix is in's programs folder as the hook commands of a client name
// it, v being the client's project variable (none: written absolute): the
// project's npm packages by the glob, a folder of the project through v,
// any other by its path.
func (in install) prefix(v, root string) string {
	if in.dir == npmProject("").dir {
		p, _ := varBin(v, root, ".")
		return p + "/" + npmBin
	}
	if rel, ok := project.Rel(root, in.path); ok {
		p, _ := varBin(v, root, rel)
		return p
	}
	p, _ := varBin(v, root, in.path)
	return p
}

const goModule = "github.com/stopgate/stopgate"

// goPinned is shell text for the version go.mod pins stopgate at. go
// install at a version builds the module as published; a bare go install
// in the module builds what go.mod's replace, vendor/ or a go.work say,
// and the agent can write those: its own gate would be installed in bin.
const goPinned = "@$(go list -m -f '{{.Version}}' " + goModule + ")"

// goInstall is the command that installs the programs into gobin (shell
// text), at version (@v1.2.3, @latest, goPinned).
func goInstall(gobin, version string) string {
	return "GOBIN=" + gobin + " go install " + goModule + "/cmd/..." + version
}

// npmProject is stopgate from the project's npm packages, the programs in
// dir (none when only the glob is known). The glob is written unquoted:
// the shell expands it.
func npmProject(dir string) install {
	return install{method: "npm", dir: `"$CLAUDE_PROJECT_DIR"/` + npmBin, path: dir, command: "npm install"}
}

// goTool reports whether the Go module at root has stopgate's gate as a
// tool (go get -tool).
func goTool(root string) bool {
	data, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) > 0 && f[len(f)-1] == goModule+"/cmd/gate" && (len(f) == 1 || f[0] == "tool") {
			return true
		}
	}
	return false
}

// binInstall is stopgate in bin, relative to root or absolute. The
// launcher's halt is committed with the settings, so a folder of the project
// is named relative to it (make install PREFIX=…); one outside it is a go
// install at the version this gate is.
func binInstall(root, bin string) install {
	prefix, dir := varBin("CLAUDE_PROJECT_DIR", root, bin) // as Claude Code's hook commands start
	v := "@latest"
	if r := buildinfo.Read().Release(); r != "" {
		v = "@v" + r
	}
	rel, ok := project.Rel(root, dir)
	switch {
	case ok && filepath.Base(rel) == "bin":
		return install{method: "bin", dir: prefix, path: dir, command: "make install PREFIX=" + cli.ShellQuote(filepath.ToSlash(filepath.Dir(rel)))}
	case ok:
		return install{method: "bin", dir: prefix, path: dir, command: goInstall(`"$PWD"/`+cli.ShellQuote(filepath.ToSlash(rel)), v)}
	}
	return install{method: "path", dir: prefix, path: dir, command: goInstall(cli.ShellQuote(dir), v)}
}

// npmPlatformDir returns the platform package directory holding the
// programs' directory dir (…/node_modules/@stopgate/linux-x64/bin).
func npmPlatformDir(dir string) (string, bool) {
	pkg := filepath.Dir(dir)
	ok := filepath.Base(dir) == "bin" &&
		filepath.Base(filepath.Dir(pkg)) == "@stopgate" &&
		filepath.Base(filepath.Dir(filepath.Dir(pkg))) == "node_modules"
	return pkg, ok
}

// self is the running program's path with symlinks resolved, or ""
// when it cannot be told.
func self() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return strings.TrimSuffix(exe, " (deleted)")
}
