package shell

import (
	"path"
	"strings"
)

// Unknown stands for a value a dry run cannot know (a variable the
// command does not set, the output of a program it does not run): a word
// that holds it is not judged.
const Unknown = "\x01?\x01"

// wrappers run the command that follows their own options; the function
// returns how many arguments to skip to reach it, or -1 when none runs.
var wrappers = map[string]func([]string) int{
	"sudo": SkipOpts("ugpCDrtUT", 0), "doas": SkipOpts("uC", 0), "nice": SkipOpts("n", 0),
	"nohup": SkipOpts("", 0), "builtin": SkipOpts("", 0), "chronic": SkipOpts("", 0),
	"unbuffer": SkipOpts("", 0), "setsid": SkipOpts("", 0), "exec": SkipOpts("a", 0),
	"time": SkipOpts("fo", 0), "timeout": SkipOpts("sk", 1), "stdbuf": SkipOpts("ioe", 0),
	"ionice": SkipOpts("cnpP", 0), "busybox": SkipOpts("", 0),
	"env": envSkip,
	"command": func(args []string) int {
		for _, a := range args {
			if a == "-v" || a == "-V" {
				return -1 // a lookup, nothing runs
			}
		}
		return SkipOpts("", 0)(args)
	},
}

// Skip says whether the program name wraps the command in its arguments
// args (sudo, env, timeout, …), and how many of them to skip to reach it;
// skip is out of range when none runs.
func Skip(name string, args []string) (skip int, wraps bool) {
	w, ok := wrappers[name]
	if !ok {
		return 0, false
	}
	return w(args), true
}

// Unwrap is the index in args of the command that args's wrappers (env,
// timeout, nice, …) run, the first word when none wraps; false when a
// wrapper runs nothing.
func Unwrap(args []string) (int, bool) {
	i := 0
	for i < len(args) {
		skip, wraps := Skip(path.Base(args[i]), args[i+1:])
		if !wraps {
			break
		}
		if skip < 0 || skip >= len(args)-i-1 {
			return 0, false
		}
		i += 1 + skip
	}
	return i, true
}

// SkipOpts returns a Skip function for a command whose options with a
// value are the letters of short, followed by positional operands before
// the command it runs.
func SkipOpts(short string, positional int) func([]string) int {
	return func(args []string) int {
		i := 0
		for i < len(args) && !unknown(args[i]) && strings.HasPrefix(args[i], "-") && args[i] != "-" {
			t := args[i]
			i++
			if t == "--" {
				break
			}
			if !strings.HasPrefix(t, "--") && len(t) == 2 && strings.Contains(short, t[1:]) {
				i++ // its value
			}
		}
		return i + positional
	}
}

func envSkip(args []string) int {
	_, program := EnvOptions(args)
	return program
}

// EnvOpt is one of env's arguments before its program, as GNU env reads
// it: Name is "i" (-i, -, --ignore-environment), "u" (-u, --unset), "C"
// (-C, --chdir), "S" (-S, --split-string: Value is the text split into
// the command's first words), "=" (a NAME=value word, whole in Value), or
// "" for an option that changes nothing the guard follows.
type EnvOpt struct{ Name, Value string }

// EnvOptions reads env's arguments: the options and assignments, and the
// index of the program they run (len(args) when none). Long options take
// their value attached (--unset=X) or as the next word; short ones may be
// grouped (-iu NAME, -uNAME). The guard and the run line both read env
// here, so that no spelling of an option is taken for the program.
func EnvOptions(args []string) (opts []EnvOpt, program int) {
	long := map[string]string{"--ignore-environment": "i", "--unset": "u", "--chdir": "C", "--split-string": "S"}
	i := 0
	for i < len(args) {
		t := args[i]
		i++
		switch {
		case t == "--":
			return opts, i
		case t == "-":
			opts = append(opts, EnvOpt{Name: "i"})
		case strings.HasPrefix(t, "--"):
			name, val, attached := strings.Cut(t, "=")
			o := EnvOpt{Name: long[name], Value: val}
			if o.Name != "" && o.Name != "i" && !attached && i < len(args) {
				o.Value, i = args[i], i+1
			}
			opts = append(opts, o)
		case strings.HasPrefix(t, "-") && !unknown(t):
			for j := 1; j < len(t); j++ {
				o := EnvOpt{Name: string(t[j])}
				if strings.Contains("uCS", o.Name) {
					if o.Value = t[j+1:]; o.Value == "" && i < len(args) {
						o.Value, i = args[i], i+1
					}
					opts = append(opts, o)
					break
				}
				if o.Name != "i" {
					o.Name = ""
				}
				opts = append(opts, o)
			}
		case !unknown(t) && strings.Contains(t, "=") && IsName(t[:strings.IndexByte(t, '=')]):
			opts = append(opts, EnvOpt{Name: "=", Value: t})
		default:
			return opts, i - 1
		}
	}
	return opts, i
}

func unknown(t string) bool { return strings.Contains(t, Unknown) }

// IsName reports whether s is a shell variable name.
func IsName(s string) bool {
	if s == "" || !(s[0] == '_' || s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// IsShell reports whether name is a shell, whose first operand is a script.
func IsShell(name string) bool {
	switch name {
	case "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish":
		return true
	}
	return false
}

// Interp is an interpreter's options: those that take a value, those
// whose value is program text, and its long options that take a value.
type Interp struct {
	Values string
	Code   []string
	Long   []string
}

// Interps are the interpreters whose first operand is a script.
var Interps = map[string]Interp{
	"python":    {Values: "cmWXQ", Code: []string{"c"}},
	"perl":      {Values: "eEI", Code: []string{"e", "E"}},
	"ruby":      {Values: "eIrCE", Code: []string{"e"}},
	"node":      {Values: "epr", Code: []string{"e", "p", "eval", "print"}, Long: []string{"eval", "print", "require"}},
	"nodejs":    {Values: "epr", Code: []string{"e", "p", "eval", "print"}, Long: []string{"eval", "print", "require"}},
	"bun":       {Values: "epr", Code: []string{"e", "p", "eval", "print"}, Long: []string{"eval", "print"}},
	"php":       {Values: "rdcfB", Code: []string{"r", "B"}},
	"lua":       {Values: "el", Code: []string{"e"}},
	"luajit":    {Values: "el", Code: []string{"e"}},
	"Rscript":   {Values: "e", Code: []string{"e"}},
	"julia":     {Values: "eE", Code: []string{"e", "E"}},
	"osascript": {Values: "e", Code: []string{"e"}},
	"tclsh":     {},
}

// Interpreter returns the name under which Interps knows the program
// name (python3.12 is python, php8.2 php), and whether it does.
func Interpreter(name string) (string, bool) {
	if _, ok := Interps[name]; ok {
		return name, true
	}
	if strings.HasPrefix(name, "python") {
		return "python", true
	}
	if base := Unversioned(name); base != name {
		if _, ok := Interps[base]; ok {
			return base, true
		}
	}
	return "", false
}

// Unversioned is an interpreter's name without a version suffix: php8.2
// is php, lua5.4 lua, node20 node.
func Unversioned(name string) string {
	return strings.TrimRight(name, "0123456789.-")
}
