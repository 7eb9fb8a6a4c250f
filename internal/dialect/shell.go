package dialect

import (
	"path"
	"path/filepath"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// reader describes a program that prints the files named by its operands:
// which options take a value, and whether the first operand is a script or
// pattern rather than a file (unless an option such as -e supplied it).
type reader struct {
	valued     []string // options taking a value: "-n" also matches "-n5"
	script     bool     // the first operand is a script or pattern
	scriptOpts []string // options that supply the script instead
	inPlace    bool     // -i or --in-place makes it an edit, not a read (sed)
}

// readers are the programs whose file operands a shell command reads, as
// an agent without a read tool uses them to look at a file.
var readers = map[string]reader{
	"cat": {}, "tac": {}, "less": {}, "more": {}, "bat": {}, "batcat": {},
	"head": {valued: []string{"-n", "-c", "--lines", "--bytes"}},
	"tail": {valued: []string{"-n", "-c", "--lines", "--bytes"}},
	"nl":   {valued: []string{"-b", "-d", "-f", "-h", "-i", "-l", "-n", "-s", "-v", "-w"}},
	"sed": {valued: []string{"-e", "-f", "-l"}, script: true, scriptOpts: []string{"-e", "-f", "--expression", "--file"},
		inPlace: true},
	"awk":   {valued: []string{"-F", "-v", "-f"}, script: true, scriptOpts: []string{"-f"}},
	"grep":  {valued: grepValued, script: true, scriptOpts: []string{"-e", "-f", "--regexp", "--file"}},
	"egrep": {valued: grepValued, script: true, scriptOpts: []string{"-e", "-f", "--regexp", "--file"}},
	"fgrep": {valued: grepValued, script: true, scriptOpts: []string{"-e", "-f", "--regexp", "--file"}},
	"rg": {valued: append([]string{"-g", "--glob", "-t", "--type", "-T", "--type-not", "-M", "--max-columns"}, grepValued...),
		script: true, scriptOpts: []string{"-e", "-f", "--regexp", "--file"}},
}

var grepValued = []string{"-e", "-f", "-m", "-A", "-B", "-C", "--regexp", "--file", "--max-count",
	"--after-context", "--before-context", "--context"}

// ShellReads returns the files a shell command reads, absolute (relative
// operands are taken from cwd): the file operands of the reading programs
// above and every input redirection. Words the shell would expand ($VAR,
// globs, command substitution) are not guessed at; a command that does not
// parse reads nothing. `bash -c`/`sh -c` scripts are read through.
func ShellReads(cmd, cwd string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		if p == "" || p == "-" || strings.HasPrefix(p, "~") {
			return
		}
		if !path.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		p = filepath.Clean(p)
		if !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	shellReads(cmd, 0, add)
	if out == nil {
		out = []string{} // the command was judged: it read nothing
	}
	return out
}

func shellReads(cmd string, depth int, add func(string)) {
	f, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), "")
	if err != nil {
		return
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Stmt:
			for _, r := range n.Redirs {
				if r.Op == syntax.RdrIn && r.Word != nil {
					if s, ok := literal(r.Word); ok {
						add(s)
					}
				}
			}
		case *syntax.CallExpr:
			args := make([]string, 0, len(n.Args))
			for _, w := range n.Args {
				s, ok := literal(w)
				if !ok {
					s = "\x00" // an expansion: never taken as a path
					if l, isLit := w.Parts[0].(*syntax.Lit); isLit {
						s = l.Value + s // but still seen as an option: --include=*.md
					}
				}
				args = append(args, s)
			}
			for _, p := range callReads(args, depth, add) {
				add(p)
			}
		}
		return true
	})
}

// callReads returns the file operands of one simple command, or reads
// through a `sh -c SCRIPT`.
func callReads(args []string, depth int, add func(string)) []string {
	for len(args) > 0 && (args[0] == "command" || args[0] == "exec" || args[0] == "sudo" || isAssign(args[0])) {
		args = args[1:]
	}
	if len(args) == 0 {
		return nil
	}
	prog := path.Base(args[0])
	if (prog == "sh" || prog == "bash" || prog == "zsh") && depth < 3 {
		for i := 1; i+1 < len(args); i++ {
			if strings.HasPrefix(args[i], "-") && !strings.HasPrefix(args[i], "--") && strings.Contains(args[i], "c") {
				shellReads(args[i+1], depth+1, add)
				return nil
			}
		}
		return nil
	}
	r, ok := readers[prog]
	if !ok {
		return nil
	}
	var operands []string
	scriptGiven := false
	opts := true
	for i := 1; i < len(args); i++ {
		a := args[i]
		if opts && a == "--" {
			opts = false
			continue
		}
		if opts && strings.HasPrefix(a, "-") && a != "-" {
			name, _, hasValue := strings.Cut(a, "=")
			if r.inPlace && inPlace(name) {
				return nil
			}
			if slices.Contains(r.scriptOpts, name) {
				scriptGiven = true
			}
			if slices.Contains(r.valued, a) && !hasValue {
				i++ // the option's value is the next word
			}
			continue
		}
		operands = append(operands, a)
	}
	if r.script && !scriptGiven && len(operands) > 0 {
		operands = operands[1:]
	}
	var out []string
	for _, o := range operands {
		if !strings.Contains(o, "\x00") {
			out = append(out, o)
		}
	}
	return out
}

// inPlace reports whether an option asks for an in-place edit: --in-place
// or a short-option cluster with i (-i, -ni, -i.bak).
func inPlace(name string) bool {
	if strings.HasPrefix(name, "--") {
		return name == "--in-place"
	}
	return strings.HasPrefix(name, "-i") || strings.Contains(strings.SplitN(name, ".", 2)[0], "i")
}

func isAssign(s string) bool {
	i := strings.IndexByte(s, '=')
	return i > 0 && !strings.ContainsAny(s[:i], "-/.")
}

// literal returns a word's value when it has no expansion: plain text and
// single or double quotes around plain text. The value is the shell's own
// (expand.Fields), backslashes and quotes resolved as bash resolves them;
// what decides is only that nothing in the word would expand.
func literal(w *syntax.Word) (string, bool) {
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			if strings.ContainsAny(p.Value, "*?[") {
				return "", false // a glob: the shell expands it
			}
		case *syntax.SglQuoted:
			if p.Dollar {
				return "", false
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if _, ok := q.(*syntax.Lit); !ok {
					return "", false
				}
			}
		default:
			return "", false
		}
	}
	fs, err := expand.Fields(nil, w)
	if err != nil || len(fs) != 1 {
		return "", false
	}
	return fs[0], true
}
