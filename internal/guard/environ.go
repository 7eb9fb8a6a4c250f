package guard

import (
	"os"
	"strconv"
	"strings"

	"github.com/stopgate/stopgate/internal/runline"
	"mvdan.cc/sh/v3/expand"
)

// environ is the environment a dry run starts from: what the guard knows
// ($CLAUDE_PROJECT_DIR, $HOME), for a nested shell (sh -c, bash script)
// the variables its caller exported (export f=…, f=… sh -c), and, for any
// other variable the command reads without setting, nothing (lenient) or
// unknownMark.
type environ struct {
	set     *Set
	lenient bool
	d       *dryRun        // told when an unknown variable is read; nil in the static pass
	inherit expand.Environ // the caller's environment, for a nested shell; nil at the top
}

// shellVars are managed by the shell, never taken as unknown.
var shellVars = map[string]bool{
	"IFS": true, "PWD": true, "OLDPWD": true, "PATH": true, "OPTIND": true, "OPTARG": true, "PS1": true,
	"PS2": true, "PS3": true, "PS4": true, "SHELLOPTS": true, "BASHOPTS": true, "RANDOM": true, "SECONDS": true,
	"LINENO": true, "UID": true, "EUID": true, "GID": true, "PPID": true, "TMPDIR": true, "GLOBIGNORE": true,
	"REPLY": true, "BASH_REMATCH": true, "DIRSTACK": true, "FUNCNAME": true, "PIPESTATUS": true, "HISTFILE": true,
	"BASH_VERSION": true, "BASH_VERSINFO": true, "HOSTNAME": true, "COLUMNS": true, "LINES": true,
}

func str(v string) expand.Variable {
	return expand.Variable{Set: true, Exported: true, Kind: expand.String, Str: v}
}

func (e environ) Get(name string) expand.Variable {
	if e.inherit != nil && runline.IsName(name) {
		if vr := e.inherit.Get(name); vr.Exported && vr.IsSet() {
			return vr // as the caller exported it
		}
	}
	switch name {
	case "CLAUDE_PROJECT_DIR":
		return str(e.set.root)
	case "HOME":
		if e.set.home != "" {
			return str(e.set.home)
		}
	case "HOME +":
		return str("~+") // kept as written: the judge resolves it against the cwd
	case "HOME -":
		return str("~-")
	case "PATH":
		return str("/usr/local/bin:/usr/bin:/bin")
	case "PPID":
		// As the interpreter has it, for the static pass: the client
		// (process.go).
		return str(strconv.Itoa(os.Getppid()))
	case "TMPDIR":
		// Unknown, and where the interpreter would put its FIFOs: it opens
		// paths there itself, past the open handler, so none may exist.
		return str("/" + unknownMark)
	}
	if shellVars[name] || strings.HasPrefix(name, "HOME ") || !runline.IsName(name) {
		return expand.Variable{}
	}
	if e.d != nil {
		e.d.unknownVars.Store(true)
	}
	if e.lenient {
		return expand.Variable{}
	}
	return str(unknownMark)
}

func (e environ) Each(f func(name string, vr expand.Variable) bool) {
	if e.inherit != nil {
		stop := false
		e.inherit.Each(func(name string, vr expand.Variable) bool {
			if vr.Exported && vr.IsSet() {
				stop = !f(name, vr)
			}
			return !stop
		})
		if stop {
			return
		}
	}
	if !f("CLAUDE_PROJECT_DIR", str(e.set.root)) {
		return
	}
	if e.set.home != "" {
		f("HOME", str(e.set.home))
	}
}

// env judges what env runs: the program after its options, in the
// environment they give it (env f=mappings.toml sh -c 'rm "$f"'); with -S
// (--split-string), the command its text splits into, before the rest,
// dry-run as the shell would read that text.
func (a *analyzer) env(opts, rest []word) *Hit {
	a.hc.Env = envOf(a.hc.Env, opts)
	parsed, _ := runline.EnvOptions(texts(opts))
	for _, o := range parsed {
		if o.Name == "S" {
			return a.script(o.Value+` "$@"`, "env", texts(rest), nil)
		}
	}
	return a.run(rest)
}

// envOf returns the environment env's args give the program it runs: the
// caller's exported variables (none after -i or -), less those -u unsets,
// with its NAME=value words over them; runline.Skip has found where the
// program starts.
func envOf(caller expand.Environ, args []word) expand.Environ {
	vars := map[string]string{}
	if caller != nil {
		caller.Each(func(name string, vr expand.Variable) bool {
			if vr.Exported && vr.IsSet() {
				vars[name] = vr.String()
			}
			return true
		})
	}
	opts, _ := runline.EnvOptions(texts(args))
	for _, o := range opts {
		switch o.Name {
		case "i":
			clear(vars)
		case "u":
			delete(vars, o.Value)
		case "=":
			name, v, _ := strings.Cut(o.Value, "=")
			vars[name] = v
		}
	}
	pairs := make([]string, 0, len(vars))
	for name, v := range vars {
		pairs = append(pairs, name+"="+v)
	}
	return expand.ListEnviron(pairs...)
}
