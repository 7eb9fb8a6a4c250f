package guard

import (
	"bytes"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/stopgate/stopgate/internal/shell"
)

type rule func(a *analyzer, args []string) *Hit

// rules judge programs by name; any other writes only its redirections (set in init: rules ask rules).
var rules func() map[string]rule

func init() { rules = sync.OnceValue(writeRules) }

func writeRules() map[string]rule {
	rules := byName(map[string]rule{
		"rm rmdir unlink srm wipe": operands(destroy, ""), "shred": operands(destroy, "ns"),
		"mv": copies("tS", destroy), "cp": copies("tS", under),
		"ln": operands(under, "tS"), "link tee sponge": operands(under, ""), "mkdir": mkdirRule,
		"touch": operands(under, "dtr", "date", "reference"), "truncate": operands(under, "sr", "size", "reference"),
		"mkfifo mknod": operands(under, "m", "mode"), "fallocate": operands(under, "lon", "length", "offset"), "chmod": chmodRule,
		"setfacl": operands(destroy, "mMxX", "modify", "modify-file", "remove", "remove-file", "set", "set-file"),
		"sed":     sedRule, "awk gawk mawk nawk": awkRule, "find": findRule, "xargs": xargsRule, "git": gitRule,
		"tar": tarRule, "unzip": valueRule("dxP", []string{"d"}),
		"curl": valueRule("oDcKeHdXuAFTrwmy", []string{"o", "output", "D", "dump-header", "c", "cookie-jar", "trace", "trace-ascii", "output-dir", "stderr"},
			"output", "dump-header", "cookie-jar", "trace", "trace-ascii", "output-dir", "stderr", "header", "data", "request", "user"),
		"wget": valueRule("OoaPeU", []string{"O", "output-document", "o", "output-file", "a", "append-output", "P", "directory-prefix"},
			"output-document", "output-file", "append-output", "directory-prefix"),
		"sort":                             valueRule("oktST", []string{"o", "output"}, "output", "key", "field-separator", "buffer-size", "temporary-directory"),
		"go gcc cc clang g++ c++ ld rustc": dashO, "flock": flockRule,
		strings.Join(shell.Shells, " "):                      shellRule,
		"ed ex vi vim nvim nano emacs pico micro joe kak hx": operands(under, "c"),
		"time": timeRule,
		"chown chgrp": func(a *analyzer, args []string) *Hit {
			return a.each(afterFirst(shell.Parse(args, "", "reference", "from"), "reference"), destroy)
		},
		"eval": func(a *analyzer, args []string) *Hit { return a.script(strings.Join(args, " "), "", nil) },
		"install": func(a *analyzer, args []string) *Hit {
			o := shell.Parse(args, "tSmogb", "target-directory", "suffix", "mode", "owner", "group")
			if o.Has("d", "directory") {
				return a.each(o.Ops, under)
			}
			return copies("tSmogb", under)(a, args)
		},
		"patch": func(a *analyzer, args []string) *Hit {
			o := shell.Parse(args, "oipDdBFVYzgr", "output", "input", "strip", "directory", "reject-file")
			return a.each(append(o.Val("o", "output", "r", "reject-file"), o.Ops[:min(1, len(o.Ops))]...), under) // patch FILE [PATCH]
		},
		// chattr: its +i, -i and =i are modes, not paths.
		"chattr": func(a *analyzer, args []string) *Hit {
			mode := func(w string) bool { return strings.HasPrefix(w, "+") || strings.HasPrefix(w, "=") }
			return a.each(slices.DeleteFunc(shell.Parse(args, "vp").Ops, mode), destroy)
		},
		"rsync scp": func(a *analyzer, args []string) *Hit {
			o := shell.Parse(args, "e")
			if n := len(o.Ops); n > 1 && !strings.Contains(o.Ops[n-1], ":") { // HOST:PATH is remote
				return a.into(o.Ops[n-1:], o.Ops[:n-1])
			}
			return nil
		},
		"dd": func(a *analyzer, args []string) *Hit {
			return first(args, func(w string) *Hit {
				if !strings.HasPrefix(w, "of=") {
					return nil
				}
				return a.target(w[3:], under)
			})
		},
	})
	maps.Copy(rules, byName(processRules))
	return rules
}

func byName[T any](table map[string]T) map[string]T {
	out := map[string]T{}
	for names, v := range table {
		for _, n := range strings.Fields(names) {
			out[n] = v
		}
	}
	return out
}

// operands is rm, touch, tee and the like: every operand and -t's folder.
func operands(m mode, short string, long ...string) rule {
	return func(a *analyzer, args []string) *Hit {
		o := shell.Parse(args, short, long...)
		return a.each(append(o.Val("t", "target-directory"), o.Ops...), m)
	}
}

func valueRule(short string, out []string, long ...string) rule {
	return func(a *analyzer, args []string) *Hit {
		return a.each(shell.Parse(args, short, long...).Val(out...), under)
	}
}

// mkdirRule writes its operands, which later commands see as folders.
func mkdirRule(a *analyzer, args []string) *Hit {
	o := shell.Parse(args, "m", "mode")
	for _, w := range o.Ops {
		if !unknown(w) && a.cwd != "" && w != "" {
			a.d.Wrote(a.abs(w), true)
		}
	}
	return a.each(o.Ops, under)
}

// copies is cp and mv: the destination (last operand, -t) is written, and DEST/NAME; mv destroys its sources.
func copies(short string, sources mode) rule {
	return func(a *analyzer, args []string) *Hit {
		o := shell.Parse(args, short, "target-directory", "suffix")
		srcs, dest := o.Ops, o.Val("t", "target-directory")
		if len(dest) == 0 && len(srcs) > 0 {
			dest, srcs = srcs[len(srcs)-1:], srcs[:len(srcs)-1]
		}
		if link := o.Has("l", "link"); sources == destroy || link {
			if h := a.each(srcs, destroy); h != nil {
				if sources != destroy { // cp -l makes hard links: another name that writes the source
					h.Why = "it would give " + h.Protected.Show + " another name (a hard link), which writes it from anywhere"
				}
				return h
			}
		}
		return a.into(dest, srcs)
	}
}

// into judges writing srcs to each of dests, and into DEST/NAME.
func (a *analyzer) into(dests, srcs []string) *Hit {
	return first(dests, func(d string) *Hit {
		if h := a.each([]string{d}, under); h != nil || unknown(d) || a.cwd == "" {
			return h
		}
		if fi, err := os.Stat(a.abs(d)); err != nil || !fi.IsDir() {
			return nil
		}
		return first(srcs, func(s string) *Hit {
			if unknown(s) {
				return nil
			}
			return a.target(strings.TrimSuffix(d, "/")+"/"+path.Base(s), under)
		})
	})
}

// chmodRule: the first operand that is not an option is the mode (-x is a mode), unless --reference gives it.
func chmodRule(a *analyzer, args []string) *Hit {
	var ops []string
	mode := true
	for _, t := range args {
		switch {
		case strings.HasPrefix(t, "--"):
			mode = mode && !strings.HasPrefix(t, "--reference")
		case mode && !unknown(t) && t != "" && (strings.Trim(t, "01234567") == "" || strings.Trim(t, "ugoa+-=rwxXst,") == ""):
			mode = false
		case strings.HasPrefix(t, "-") && strings.Trim(t[1:], "cfvR") == "":
		default:
			ops = append(ops, t)
		}
	}
	return a.each(ops, destroy)
}

// afterFirst is o's operands but the first (a mode, a script), unless one of the options given supplies it.
func afterFirst(o shell.Opts, given ...string) []string {
	if len(o.Val(given...)) == 0 && len(o.Ops) > 0 {
		return o.Ops[1:]
	}
	return o.Ops
}

// sedRule: sed writes only in place (-i, -i.bak, -Ei, --in-place).
func sedRule(a *analyzer, args []string) *Hit {
	if o := readRules()["sed"].parse(args); o.Has("i", "in-place") {
		return a.each(o.Ops, under)
	}
	return nil
}

func awkRule(a *analyzer, args []string) *Hit {
	o := readRules()["awk"].parse(args)
	ops := afterFirst(o, "f", "file", "E", "exec")
	if h := first(append(o.Val("source"), o.Ops[:len(o.Ops)-len(ops)]...), a.mention); h != nil {
		return h
	}
	if slices.ContainsFunc(o.Val("i", "include", "l", "load"), func(w string) bool { return w == "inplace" }) {
		return a.each(ops, under)
	}
	return nil
}

type findExpr struct {
	starts  []string   // the start paths, . when none
	execs   [][]string // the commands of -exec and the like
	deletes bool
	prints  []string            // the files -fprint and the like write
	tests   []func(string) bool // -name and -path tests
	all     bool                // -o or a negation: any file may pass
}

func parseFind(args []string) findExpr {
	i := 0
	for ; i < len(args) && (slices.Contains([]string{"-H", "-L", "-P", "-D"}, args[i]) || strings.HasPrefix(args[i], "-O")); i++ {
		if args[i] == "-D" {
			i++ // its debug options
		}
	}
	var f findExpr
	for ; i < len(args) && (unknown(args[i]) || !strings.HasPrefix(args[i], "-") && !slices.Contains([]string{"(", "!", ")", ","}, args[i])); i++ {
		f.starts = append(f.starts, args[i])
	}
	if len(f.starts) == 0 {
		f.starts = []string{"."}
	}
	for j := i; j < len(args); j++ {
		switch t := args[j]; t {
		case "-delete":
			f.deletes = true
		case "-exec", "-execdir", "-ok", "-okdir":
			k := j + 1
			for k < len(args) && args[k] != ";" && args[k] != "+" {
				k++
			}
			f.execs, j = append(f.execs, args[j+1:k]), k
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			f.prints = append(f.prints, args[j+1:min(j+2, len(args))]...)
		case "-o", "-or", "!", "-not":
			f.all = true
		case "-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename":
			if j+1 < len(args) { // its pattern is read as a primary too: -name -delete denies
				pat, fold, base := args[j+1], t[1] == 'i', t == "-name" || t == "-iname"
				f.tests = append(f.tests, func(p string) bool {
					if base {
						p = path.Base(p)
					}
					if fold {
						pat, p = strings.ToLower(pat), strings.ToLower(p)
					}
					ok, _ := path.Match(pat, p)
					return ok
				})
			}
		}
	}
	return f
}

// findRule: -delete, or -exec of a writing command, destroys the start paths; -fprint writes its file.
func findRule(a *analyzer, args []string) *Hit {
	f := parseFind(args)
	removes := f.deletes
	for _, cmd := range f.execs {
		sub := replaced(cmd, "{}", shell.Unknown) // each file found: judged through the start paths
		removes = removes || writer(sub)
		if h := a.run(sub); h != nil {
			return h
		}
	}
	if h := first(f.prints, func(w string) *Hit { return a.target(w, under) }); h != nil || !removes {
		return h
	}
	return a.each(f.starts, destroy)
}

// writer reports whether a command writes the paths find -exec gives it.
func writer(ws []string) bool {
	n, ok := shell.Unwrap(ws)
	if !ok || n >= len(ws) || unknown(ws[n]) {
		return false
	}
	ws = ws[n:]
	switch path.Base(ws[0]) {
	case "rm", "rmdir", "unlink", "shred", "srm", "wipe", "mv", "chmod", "chown", "chgrp", "chattr", "setfacl",
		"cp", "ln", "link", "tee", "truncate", "touch", "dd", "install", "sponge", "mkdir", "rsync":
		return true
	case "sed", "perl", "ruby":
		return slices.ContainsFunc(ws[1:], func(t string) bool {
			return strings.HasPrefix(t, "-") && !strings.HasPrefix(t, "--") && strings.Contains(t, "i") || strings.HasPrefix(t, "--in-place")
		})
	}
	return false
}

// xargsRule judges the command xargs runs, alone and with each item read.
func xargsRule(a *analyzer, args []string) *Hit {
	o := shell.Parse(args, "+IdELnPsa", "arg-file", "delimiter", "max-args", "max-procs", "max-chars", "process-slot-var")
	repl, from := last(o.Val("I", "replace")), last(o.Val("a", "arg-file"))
	if repl == "" && (o.Has("replace") || slices.ContainsFunc(args[:len(args)-len(o.Ops)], func(w string) bool { return w == "-i" })) {
		repl = "{}"
	}
	sub := o.Ops
	if len(sub) == 0 {
		return nil // xargs alone runs echo
	}
	if h := a.run(sub); h != nil {
		return h
	}
	in := a.input()
	if from != "" {
		r, _ := a.d.Open(from, a.hc.Dir) // a file it cannot read gives no items
		in, _ = io.ReadAll(r)
	}
	items := strings.Fields(string(in))
	return first(items[:min(len(items), maxItems)], func(item string) *Hit {
		if repl == "" {
			return a.run(append(slices.Clone(sub), a.word(item)))
		}
		return a.run(a.words(replaced(sub, repl, item)))
	})
}

func last(ws []string) string {
	if len(ws) == 0 {
		return ""
	}
	return ws[len(ws)-1]
}

// gitRule: checkout, restore, rm, mv and clean destroy their paths.
func gitRule(a *analyzer, args []string) *Hit {
	b := *a
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		switch t := args[i]; {
		case t == "-C" && i+1 < len(args):
			i++
			if d := args[i]; unknown(d) || b.cwd == "" && !strings.HasPrefix(d, "/") {
				b.cwd = ""
			} else {
				b.cwd = shell.Unescape(shell.Abs(glob(d), escape(b.cwd)))
			}
		case t == "-c" || t == "--git-dir" || t == "--work-tree" || t == "--namespace":
			i++
		}
	}
	if i >= len(args) {
		return nil
	}
	var o shell.Opts
	switch sub, rest := args[i], args[i+1:]; sub {
	case "checkout", "restore":
		o = shell.Parse(rest, "bBsUp", "source", "orphan", "conflict", "pathspec-from-file", "unified")
		if sub == "restore" && o.Has("S", "staged") && !o.Has("W", "worktree") {
			return nil // the index only
		}
	case "rm", "mv":
		o = shell.Parse(rest, "")
	case "clean":
		o = shell.Parse(rest, "e", "exclude")
		if o.Has("n", "dry-run") || len(o.Ops) == 0 && !o.Has("x", "X") {
			return nil // without -x it keeps ignored files, such as the state dir
		}
		if len(o.Ops) == 0 {
			o.Ops = []string{"."}
		}
	}
	return b.each(o.Ops, destroy)
}

func tarRule(a *analyzer, args []string) *Hit {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") && !unknown(args[0]) {
		args = append([]string{"-" + args[0]}, args[1:]...)
	}
	o := shell.Parse(args, "fCTXbgHKLNV", "file", "directory", "files-from", "exclude-from")
	var out []string
	if o.Has("c", "create", "r", "append", "u", "update") {
		out = o.Val("f", "file")
	}
	if o.Has("x", "extract", "get") {
		out = append(out, o.Val("C", "directory")...)
	}
	return a.each(out, under)
}

// dashO writes the value of -o (go build, cc), each word read alone: a cluster parse would let -Io eat the real -o.
func dashO(a *analyzer, args []string) *Hit {
	for i, t := range args {
		if t == "--o" || strings.HasPrefix(t, "--o=") {
			t = t[1:] // go's flag parser reads --o and --o= as -o and -o=
		}
		var out string
		if t == "-o" && i+1 < len(args) {
			out = args[i+1]
		} else if strings.HasPrefix(t, "-o=") || strings.HasPrefix(t, "-o") && len(t) > 2 && path.Base(args[0]) != "go" {
			out = strings.TrimPrefix(strings.TrimPrefix(t, "-o"), "=")
		}
		if h := a.target(out, under); h != nil {
			return h
		}
	}
	return nil
}

// shellRule dry-runs sh -c's script, the script on stdin (a doubt for unknown parts: … | base64 -d | sh), or a FILE written.
func shellRule(a *analyzer, args []string) *Hit {
	o := shell.ShellOpts(args)
	if o.Has("c") {
		if len(o.Ops) == 0 || unknown(o.Ops[0]) {
			return nil
		}
		zero, params := "", []string(nil)
		if len(o.Ops) > 1 {
			zero, params = o.Ops[1], o.Ops[2:]
		}
		return a.script(o.Ops[0], zero, params)
	}
	if len(o.Ops) == 0 || o.Has("s") || o.Ops[0] == "-" {
		body := a.input()
		if bytes.Contains(body, []byte(shell.Unknown)) {
			a.d.Doubt("it pipes text into a shell that the guard cannot know")
		}
		return a.script(strings.ReplaceAll(string(body), shell.Unknown, ""), "", nil)
	}
	if unknown(o.Ops[0]) {
		return nil
	}
	return a.written(o.Ops[0], o.Ops[1:])
}

// timeRule is GNU time: -o FILE writes it (-a appends); the command after its options runs.
func timeRule(a *analyzer, args []string) *Hit {
	o := shell.Parse(args, "+fo", "format", "output")
	if h := a.each(o.Val("o", "output"), under); h != nil {
		return h
	}
	return a.run(o.Ops)
}

// flockRule: a lock held on the state dir stalls the gate; flock FD locks what a redirection opened.
func flockRule(a *analyzer, args []string) *Hit {
	o := shell.Parse(args, "wEc", "timeout", "conflict-exit-code", "command")
	if len(o.Ops) == 0 {
		return nil
	}
	lock := o.Ops[0]
	if allDigits(lock) {
		if h := a.d.lockable.Load(); h != nil {
			return &Hit{Protected: h.Protected, Target: h.Target, By: a.by, Why: "it would hold a lock on " + h.Protected.Show + ", which stalls stopgate's gate"}
		}
		a.d.Doubt("it holds a lock on a file descriptor the guard may not see opened")
	} else if t := a.target(lock, under); t != nil {
		t.Why = "it would hold a lock on " + t.Protected.Show + ", which stalls stopgate's gate"
		return t
	}
	if h := first(o.Val("c", "command"), func(c string) *Hit { return a.script(c, "", nil) }); h != nil {
		return h
	}
	return a.run(o.Ops[1:])
}

func allDigits(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

// otherInterpreters run code the table has no options for: naming a protected path denies them.
var otherInterpreters = strings.Fields("deno pwsh powershell guile racket groovy scala elixir escript swift jshell wish R gst sbcl clisp ocaml runghc kotlin")

// interpreter denies a program whose code acts on the client or names a protected path, or an argument that is one.
func (a *analyzer) interpreter(name string, args []string) *Hit {
	spec := shell.Interps[name]
	o := shell.Parse(args, spec.Values, spec.Long...)
	code := o.Val(spec.Code...)
	if slices.ContainsFunc(code, func(w string) bool { return signalsClient().MatchString(w) && findsClient().MatchString(w) }) {
		return procHit(a, "its "+name+" code signals, limits or traces a process it finds as stopgate's client or hooks")
	}
	if h := first(code, a.mention); h != nil {
		return h
	}
	ops := o.Ops
	if len(code) == 0 && len(o.Val("m")) == 0 {
		if len(ops) == 0 || ops[0] == "-" {
			if h := a.mention(string(a.input())); h != nil {
				return h
			}
		}
		if len(ops) > 0 {
			ops = ops[1:] // the script or -
		}
	}
	return a.each(ops, under)
}

// gateRule refuses gate clear, init and uninstall, a person's decisions, as writes of what they change.
func gateRule(a *analyzer, args []string) *Hit {
	if len(args) == 0 {
		return nil
	}
	sub := args[0]
	for _, t := range a.d.set.targets {
		stateDir := t.Dir && strings.Contains(t.Why, "state dir")
		settings := strings.HasSuffix(t.Path, "/.claude/settings.json")
		if sub == "clear" && stateDir || (sub == "init" || sub == "uninstall") && settings {
			return &Hit{Protected: t.Protected, Target: t.Show, By: a.by,
				Why: "gate " + sub + " is a person's decision: it would change " + t.Show + ", which stopgate relies on"}
		}
	}
	return nil
}

func replaced(ws []string, old, new string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		out[i] = strings.ReplaceAll(w, old, new)
	}
	return out
}

// A readRule says which operands a program reads (rules: which it writes).
type readRule struct {
	short    string   // option letters that take a value (-n 5, -n5)
	long     []string // long options that take a value
	scriptBy []string // with a script or pattern as its first operand: the options that supply it instead
	edits    []string // options that make it an edit in place: nothing is read, the write rules judge it
}

// readRules are the programs whose file operands a command reads.
var readRules = sync.OnceValue(func() map[string]readRule {
	grep := readRule{short: "efmABCd", long: []string{"regexp", "file", "max-count", "after-context", "before-context", "context"},
		scriptBy: []string{"e", "f", "regexp", "file"}}
	rg := grep
	rg.short += "gtTM"
	rg.long = append([]string{"glob", "type", "type-not", "max-columns"}, grep.long...)
	return byName(map[string]readRule{
		"head tail": {short: "nc", long: []string{"lines", "bytes"}},
		"nl":        {short: "bdfhilnsvw"}, "pr": {short: "hlNow"}, "fold": {short: "w"}, "od": {short: "AjNtw"},
		"xxd": {short: "cglos"}, "hexdump": {short: "enfs"},
		"sed": {short: "efl", long: []string{"expression", "file", "line-length"},
			scriptBy: []string{"e", "f", "expression", "file"}, edits: []string{"i", "in-place"}},
		"cat tac less more most bat batcat view strings rev": {},
		"awk gawk mawk nawk": {short: "fvFiEl", long: []string{"file", "assign", "field-separator", "include", "exec", "load", "source"},
			scriptBy: []string{"f", "file", "E", "exec", "source"}},
		"grep egrep fgrep": grep, "rg": rg,
	})
})

func (r readRule) parse(args []string) shell.Opts { return shell.Parse(args, r.short, r.long...) }

func (r readRule) operands(args []string) []string {
	switch o := r.parse(args); {
	case o.Has(r.edits...):
		return nil
	case len(r.scriptBy) > 0:
		return afterFirst(o, r.scriptBy...)
	default:
		return o.Ops
	}
}

func (d *dryRun) read(a *analyzer, t string) {
	if d.readSeen == nil || t == "" || t == "-" || strings.Contains(t, shell.Unknown) || a.cwd == "" && !strings.HasPrefix(t, "/") {
		return
	}
	p := shell.Abs(t, a.cwd)
	d.mu.Lock()
	if !d.readSeen[p] {
		d.readSeen[p] = true
		d.reads = append(d.reads, p)
	}
	d.mu.Unlock()
}

const maxFound = 2000 // the files one find of a read walks

// findReads records the files find hands a reading -exec: those its -name and -path tests pass (all with -o or a negation).
func (a *analyzer) findReads(f findExpr) {
	reads := slices.ContainsFunc(f.execs, func(sub []string) bool {
		n, ok := shell.Unwrap(sub)
		if !ok || n >= len(sub) || unknown(sub[n]) {
			return false
		}
		_, reads := readRules()[path.Base(sub[n])]
		return reads
	})
	if !reads || a.cwd == "" {
		return
	}
	n := 0
	for _, start := range f.starts {
		s := start
		if unknown(start) {
			s = "." // a start the dry run cannot know: the cwd, as when none is given
		}
		root := shell.Abs(s, a.cwd)
		filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
			if err != nil || n >= maxFound || a.d.Past() {
				return filepath.SkipAll
			}
			n++
			shown := s // as find prints it: the start as given ("./x" under "."), then the path under it
			if rel := strings.TrimPrefix(slash(p), slash(root)); rel != "" {
				shown = strings.TrimSuffix(s, "/") + rel
			}
			if e.Type().IsRegular() && (f.all || !slices.ContainsFunc(f.tests, func(t func(string) bool) bool { return !t(shown) })) {
				a.d.read(a, slash(p))
			}
			return nil
		})
	}
}

// ShellReads returns the files a shell command run in cwd reads, absolute and in order, by the dry run's first pass; from
// the root too, as cwd may be where it ended (PostToolUse keeps a cd): a read armed twice costs a check, one missed the promise.
func ShellReads(cmd, cwd, root, home string) []string {
	reads := []string{}
	if strings.TrimSpace(cmd) == "" {
		return reads
	}
	s := New(root, home, nil)
	for _, dir := range slices.Compact([]string{path.Clean(slash(cwd)), path.Clean(slash(root))}) {
		for _, p := range s.shellReads(cmd, dir) {
			if !slices.Contains(reads, p) {
				reads = append(reads, p)
			}
		}
	}
	return reads
}

func (s *Set) shellReads(cmd, cwd string) (reads []string) {
	d := s.newDryRun(cmd)
	d.readSeen = map[string]bool{}
	defer func() {
		recover() // a panic ends the analysis with what it found
		d.mu.Lock()
		reads = append([]string{}, d.reads...) // a copy: a runner past its deadline may still append
		d.mu.Unlock()
	}()
	if !d.plain(cmd, cwd) {
		if f := d.Load(cmd); f != nil {
			d.Top = f
			(&shell.Shell{Run: d.Run, Pass: shell.Passes[0], Top: true}).RunFile(f, cwd, nil)
		}
	}
	return nil
}
