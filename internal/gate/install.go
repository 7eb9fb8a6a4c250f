package gate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/buildinfo"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
)

// install is how stopgate is installed for a project, and how a machine without it gets it.
type install struct {
	method  string // "npm", "go tool", "bin" (a folder of the project), "path" (one outside it)
	dir     string // the bin dir as a shell prefix, e.g. "$CLAUDE_PROJECT_DIR"/bin
	path    string // the directory dir names here
	command string // the one command that installs it here
}

// npmBin is a glob: the settings are shared by machines of every platform.
const npmBin = guard.NpmScope + "/*/bin"

// installOf says how the gate at exe is installed for the project at root
// when --bin was not given: npm (the project's or global), go tool, or bin.
// A gate on PATH is not registered by its path, one machine's.
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
		// go tool costs hundreds of milliseconds a call (docs/architecture.md):
		// the hooks run what go install puts in bin, at the version go.mod pins.
		inst := binInstall(root, bin)
		if rel, ok := project.Rel(root, inst.path); ok {
			inst.method = "go tool"
			inst.command = goInstall(`"$PWD"/`+cli.ShellQuote(filepath.ToSlash(rel)), goPinned)
		}
		return inst
	}
	return binInstall(root, bin)
}

// routes are the installs gate init may have registered, for gate uninstall.
func routes(root, bin string) []install {
	return []install{binInstall(root, bin), npmProject(""), installOf(root, bin, self())}
}

// npmDirs are the programs' folders of every released platform package.
func npmDirs(root string) []string {
	var out []string
	for _, pkg := range npmPlatforms {
		out = append(out, filepath.Join(root, filepath.FromSlash(guard.NpmScope), pkg, "bin"))
	}
	return out
}

// npmPlatforms are dist.Platforms (install_test.go keeps the two equal).
var npmPlatforms = []string{"linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"}

// shown is the program prog as a missing one is named.
func (in install) shown(root, prog string) string {
	if in.dir == npmProject("").dir {
		return guard.NpmScope + "/" + platform + "/bin/" + prog
	}
	return project.Display(root, filepath.Join(in.path, prog))
}

// prefix is in's folder as the hooks of a client with project variable v name it.
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

// goPinned is shell text for the version go.mod pins: a bare go install
// would build what the agent can write (replace, vendor/, go.work).
const goPinned = "@$(go list -m -f '{{.Version}}' " + goModule + ")"

// goInstall is the command that installs the programs into gobin at
// version. CGO_ENABLED=0 links them statically, as make build's tags do:
// with cgo, os/user (which mvdan.cc/sh imports) links libc, +1 ms a call.
func goInstall(gobin, version string) string {
	return "CGO_ENABLED=0 GOBIN=" + gobin + " go install " + goModule + "/cmd/..." + version
}

// npmProject is the project's npm packages, programs in dir ("": only the glob is known).
func npmProject(dir string) install {
	return install{method: "npm", dir: `"$CLAUDE_PROJECT_DIR"/` + npmBin, path: dir, command: "npm install"}
}

// goTool reports whether the Go module at root has stopgate's gate as a tool.
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

// binInstall is stopgate in bin, relative to root or absolute.
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

// npmPlatformDir returns the platform package holding the programs' dir.
func npmPlatformDir(dir string) (string, bool) {
	pkg := filepath.Dir(dir)
	ok := filepath.Base(dir) == "bin" &&
		filepath.Base(filepath.Dir(pkg)) == "@stopgate" &&
		filepath.Base(filepath.Dir(filepath.Dir(pkg))) == "node_modules"
	return pkg, ok
}

// self is the running program's path, symlinks resolved ("" if unknown).
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

// launch returns the command line gate init registers on c's event: the
// launcher (settings.Launcher) of candidates with args. A program that
// cannot run halts the stop or is denied by the guard; one not installed at
// all is answered by missing (docs/install.md).
func launch(c *client.Client, event string, candidates []string, args string, in install, root, shown string) string {
	text := missingText(in, shown)
	return settings.Launcher(candidates, args, missingAnswer(c, event, text), missing(c, event, in, root, text))
}

func missingText(in install, shown string) string {
	return fmt.Sprintf("stopgate is not installed on this machine: %s is missing or cannot run, so nothing this session did was checked. Install it with: %s (then run the session again)",
		shown, in.command)
}

// missingAnswer is the launcher's halt at a stop, or deny at the guard, when the program cannot run.
func missingAnswer(c *client.Client, event, text string) string {
	switch c.Event(event) {
	case hook.Stop, hook.SubagentStop:
		return c.Answer(event, hook.Halt(text))
	case hook.PreToolUse, hook.PreSkillShellCommand:
		return c.Answer(event, hook.Deny(c.Event(event), text))
	}
	return ""
}

// platform stands for the machine's npm platform, put in from uname.
const platform = "@PLATFORM@"

// missing is the sh the launcher runs where the program is not installed:
// a stop halts only when the transcript mentions a mapped prompt (or cannot
// be read); the guard refuses a call naming a protected file. Limits in
// docs/troubleshooting.md.
func missing(c *client.Client, event string, in install, root, text string) string {
	switch c.Event(event) {
	case hook.Stop, hook.SubagentStop:
		dir, _ := varBin(c.ProjectVar, root, ".")
		return promptInPlay(dir+"/"+project.ConfigName) + " || exit 0; " + printAnswer(c.Answer(event, hook.Halt(text)))
	case hook.PreToolUse, hook.PreSkillShellCommand:
		// One -e a name, not a line each: a newline in a hook's command makes
		// Claude Code's debug log quote the line whole.
		var grep strings.Builder
		grep.WriteString("grep -qF")
		for _, name := range protectedNames(root, in) {
			grep.WriteString(" -e " + cli.ShellQuote(name))
		}
		return grep.String() + " || exit 0; " + printAnswer(c.Answer(event, hook.Deny(c.Event(event), text)))
	}
	return ""
}

// promptInPlay is sh that succeeds when the transcript the hook input names
// mentions a prompt of config's mappings, or cannot be read; skill_listing
// lines (every skill by name in each session) are left out.
func promptInPlay(config string) string {
	const keys = `awk '/^[ \t]*#/ { next } { while (match($0, /prompt[ \t]*=[ \t]*"[^"]*"/)) { k = substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH); sub(/^[^"]*"/, "", k); sub(/"$/, "", k); d = k; gsub("/", "-", d); c = k; gsub("/", ":", c); n = k; sub(/.*:/, "", n); print k ".md"; print d ".md"; print k "/SKILL.md"; print "/" c; print "/" d; print "/" n; print "\"" n "\"" } } /prompt[ \t]*=[ \t]*\047/ { print "/" }' `
	return `t=$(sed -n 's/.*"transcript_\{0,1\}[pP]ath" *: *"\([^"]*\)".*/\1/p' | head -n 1); k=$(` + keys + config + ` 2>/dev/null); [ -n "$k" ] && { [ ! -r "$t" ] || grep -v '"skill_listing"' "$t" | grep -qF "$k"; }`
}

func printAnswer(answer string) string {
	before, after, found := strings.Cut(answer, platform)
	if !found {
		return `printf '%s\n' ` + cli.ShellQuote(answer)
	}
	return `printf '%s%s%s\n' ` + cli.ShellQuote(before) + ` "$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m | sed 's/x86_64/x64/; s/aarch64/arm64/')" ` + cli.ShellQuote(after)
}

// protectedNames are what the launcher's guard refuses in a tool call, from the project root.
func protectedNames(root string, in install) []string {
	out := []string{project.ConfigName, guard.NpmScope}
	out = append(out, guard.ClientFiles()...)
	if line := ignoreLine(root); line != "" {
		out = append(out, strings.Trim(line, "/"))
	}
	if rel, ok := project.Rel(root, in.path); ok && rel != "." && in.path != "" {
		// Not testhook's: gate init --no-testhook registers nothing of it.
		for _, p := range []string{hook.Detect, hook.Gate} {
			out = append(out, filepath.ToSlash(filepath.Join(rel, p)))
		}
	}
	return out
}
