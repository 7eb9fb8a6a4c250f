package shell

import (
	"path"
	"slices"
	"strings"
)

// Unknown stands for a value a dry run cannot know: no word holding it is judged.
const Unknown = "\x01?\x01"

// wrappers run a command after their options, those in values (letters) and long (names) taking one, and operands.
var wrappers = map[string]struct {
	values   string
	operands int
	long     []string
}{
	"sudo": {"ugpCDrtUT", 0, []string{"user", "group", "prompt", "close-from", "chdir", "role", "type", "other-user", "host", "command-timeout"}},
	"doas": {"uC", 0, nil}, "nice": {"n", 0, []string{"adjustment"}}, "nohup": {}, "builtin": {}, "chronic": {},
	"unbuffer": {}, "setsid": {}, "exec": {"a", 0, nil}, "time": {"fo", 0, []string{"format", "output"}},
	"timeout": {"sk", 1, []string{"signal", "kill-after"}}, "stdbuf": {"ioe", 0, []string{"input", "output", "error"}},
	"ionice": {"cnpPu", 0, []string{"class", "classdata", "pid", "pgid", "uid"}}, "busybox": {}, "taskset": {"", 1, nil},
	"chrt": {"TPD", 1, []string{"sched-runtime", "sched-period", "sched-deadline"}}, "prlimit": {}, "env": {}, "command": {},
}

// Skip says whether name wraps the command in args, and how many arguments precede it (out of range: none).
func Skip(name string, args []string) (skip int, wraps bool) {
	w, ok := wrappers[name]
	switch {
	case !ok:
		return 0, false
	case name == "env":
		_, program := EnvOptions(args)
		return program, true
	case name == "command" && (slices.Contains(args, "-v") || slices.Contains(args, "-V")):
		return -1, true // a lookup, nothing runs
	}
	return len(args) - len(Parse(args, "+"+w.values, w.long...).Ops) + w.operands, true
}

// Unwrap is the index of the command args' wrappers run; false when a wrapper runs nothing.
func Unwrap(args []string) (int, bool) { return unwrap(args, func(int) {}) }

func unwrap(args []string, saw func(i int)) (int, bool) {
	i := 0
	for i < len(args) {
		skip, wraps := Skip(path.Base(args[i]), args[i+1:])
		if !wraps {
			break
		}
		saw(i)
		if skip < 0 || skip >= len(args)-i-1 {
			return 0, false
		}
		i += 1 + skip
	}
	return i, true
}

// Opts is a program's arguments as getopt reads them.
type Opts struct {
	Ops   []string
	vals  map[string][]string // option → values, short as "t", long as "target-directory"
	flags map[string]bool     // options seen, short letters and long names
}

// Has reports whether any of the options names was given.
func (o Opts) Has(names ...string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return o.flags[n] })
}

// Val is the values given to the options names.
func (o Opts) Val(names ...string) []string {
	var out []string
	for _, n := range names {
		out = append(out, o.vals[n]...)
	}
	return out
}

// Parse splits args into options and operands (a word holding Unknown is one); short and long name the options
// taking a value. A short starting "+" ends the options at the first operand (GNU getopt), for a program that runs one.
func Parse(args []string, short string, long ...string) Opts {
	return parse(args, func(s string) string { return s }, short, long...)
}

func parse(args []string, text func(string) string, short string, long ...string) Opts {
	o := Opts{vals: map[string][]string{}, flags: map[string]bool{}}
	short, lead := strings.CutPrefix(short, "+")
	for i := 0; i < len(args); i++ {
		t := text(args[i])
		operand := unknown(t) || !strings.HasPrefix(t, "-") || t == "-" // - is stdin
		switch {
		case operand && lead:
			o.Ops = append(o.Ops, args[i:]...)
			return o
		case operand:
			o.Ops = append(o.Ops, args[i])
		case t == "--":
			o.flags[t] = true
			o.Ops = append(o.Ops, args[i+1:]...)
			return o
		case strings.HasPrefix(t, "--"):
			name, val, eq := strings.Cut(t[2:], "=")
			o.flags[name] = true
			if eq {
				o.vals[name] = append(o.vals[name], val)
			} else if slices.Contains(long, name) && i+1 < len(args) {
				i++
				o.vals[name] = append(o.vals[name], args[i])
			}
		default:
			for j := 1; j < len(t); j++ {
				f := t[j : j+1]
				o.flags[f] = true
				if strings.Contains(short, f) {
					if j+1 < len(t) {
						o.vals[f] = append(o.vals[f], t[j+1:])
					} else if i+1 < len(args) {
						i++
						o.vals[f] = append(o.vals[f], args[i])
					}
					break
				}
			}
		}
	}
	return o
}

// ShellOpts is a shell's arguments as bash and dash read them: options up to its script, +o as -o, a lone - as --.
func ShellOpts(args []string) Opts {
	plus := func(t string) string {
		switch {
		case t == "-" || t == "+":
			return "-" + t
		case strings.HasPrefix(t, "+"):
			return "-" + t[1:]
		default:
			return t
		}
	}
	return parse(args, plus, "+oO", "rcfile", "init-file")
}

// EnvOpt is a run of env's options, or a NAME=value word (Assign).
type EnvOpt struct {
	Opts
	Assign string
}

// EnvOptions reads env's options and NAME=value words in turn, and the index of the program they run (len(args) when
// none): the one reading of env, so no spelling of an option is taken for the program.
func EnvOptions(args []string) (opts []EnvOpt, program int) {
	dash := func(t string) string { // a lone - is -i
		if t == "-" {
			return "-i"
		}
		return t
	}
	for program < len(args) {
		t := args[program]
		if !unknown(t) && strings.Contains(t, "=") && IsName(t[:strings.IndexByte(t, '=')]) {
			opts, program = append(opts, EnvOpt{Assign: t}), program+1
			continue
		}
		if unknown(t) || !strings.HasPrefix(t, "-") {
			break
		}
		o := parse(args[program:], dash, "+uCS", "unset", "chdir", "split-string")
		opts, program = append(opts, EnvOpt{Opts: o}), len(args)-len(o.Ops)
		if o.Has("--") {
			break
		}
	}
	return opts, program
}

func unknown(t string) bool { return strings.Contains(t, Unknown) }

const letters = "_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"

// IsName reports whether s is a shell variable name.
func IsName(s string) bool {
	return s != "" && strings.IndexByte(letters, s[0]) >= 0 && strings.Trim(s, letters+"0123456789") == ""
}

// Shells are the shells, whose first operand is a script.
var Shells = []string{"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish"}

// IsShell reports whether name is one of Shells.
func IsShell(name string) bool { return slices.Contains(Shells, name) }

// Interp is an interpreter's options taking a value: Values short, Long; Code take program text.
type Interp struct {
	Values     string
	Code, Long []string
}

var nodeLike, luaLike = Interp{"epr", []string{"e", "p", "eval", "print"}, []string{"eval", "print", "require"}}, Interp{"el", []string{"e"}, nil}

// Interps are the interpreters whose first operand is a script.
var Interps = map[string]Interp{
	"python": {"cmWXQ", []string{"c"}, nil}, "perl": {"eEI", []string{"e", "E"}, nil}, "ruby": {"eIrCE", []string{"e"}, nil},
	"node": nodeLike, "nodejs": nodeLike, "bun": {"epr", []string{"e", "p", "eval", "print"}, []string{"eval", "print"}},
	"php": {"rdcfB", []string{"r", "B"}, nil}, "lua": luaLike, "luajit": luaLike, "Rscript": {"e", []string{"e"}, nil},
	"julia": {"eE", []string{"e", "E"}, nil}, "osascript": {"e", []string{"e"}, nil}, "tclsh": {},
}

// Interpreter is the name Interps knows a program by (python3.12 is python), if it does.
func Interpreter(name string) (string, bool) {
	if strings.HasPrefix(name, "python") {
		return "python", true
	}
	for _, n := range []string{name, Unversioned(name)} {
		if _, ok := Interps[n]; ok {
			return n, true
		}
	}
	return "", false
}

// Unversioned is name without a version suffix: php8.2 is php, node20 node.
func Unversioned(name string) string { return strings.TrimRight(name, "0123456789.-") }
