package shell

import (
	"os"
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
)

// Environ is the environment a dry run starts from: what the guard knows
// ($CLAUDE_PROJECT_DIR, $HOME), for a nested shell (sh -c, bash script)
// the variables its caller exported (export f=…, f=… sh -c), and, for any
// other variable the command reads without setting, nothing (Lenient) or
// Unknown.
type Environ struct {
	Root, Home string // $CLAUDE_PROJECT_DIR and $HOME ("": unset)
	Lenient    bool
	run        *Run           // told when an unknown variable is read; nil in the static pass
	Inherit    expand.Environ // the caller's environment, for a nested shell; nil at the top
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

func (e Environ) Get(name string) expand.Variable {
	if e.Inherit != nil && IsName(name) {
		if vr := e.Inherit.Get(name); vr.Exported && vr.IsSet() {
			return vr // as the caller exported it
		}
	}
	switch name {
	case "CLAUDE_PROJECT_DIR":
		return str(e.Root)
	case "HOME":
		if e.Home != "" {
			return str(e.Home)
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
		return str("/" + Unknown)
	}
	if shellVars[name] || strings.HasPrefix(name, "HOME ") || !IsName(name) {
		return expand.Variable{}
	}
	if e.run != nil {
		e.run.unknownVars.Store(true)
	}
	if e.Lenient {
		return expand.Variable{}
	}
	return str(Unknown)
}

func (e Environ) Each(f func(name string, vr expand.Variable) bool) {
	if e.Inherit != nil {
		stop := false
		e.Inherit.Each(func(name string, vr expand.Variable) bool {
			if vr.Exported && vr.IsSet() {
				stop = !f(name, vr)
			}
			return !stop
		})
		if stop {
			return
		}
	}
	if !f("CLAUDE_PROJECT_DIR", str(e.Root)) {
		return
	}
	if e.Home != "" {
		f("HOME", str(e.Home))
	}
}

// EnvOf returns the environment env's args give the program it runs: the
// caller's exported variables (none after -i or -), less those -u unsets,
// with its NAME=value words over them; Skip has found where the program
// starts.
func EnvOf(caller expand.Environ, args []string) expand.Environ {
	vars := map[string]string{}
	if caller != nil {
		caller.Each(func(name string, vr expand.Variable) bool {
			if vr.Exported && vr.IsSet() {
				vars[name] = vr.String()
			}
			return true
		})
	}
	opts, _ := EnvOptions(args)
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
