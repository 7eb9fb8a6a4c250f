package shell

import (
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// A dry run in mvdan.cc/sh's interpreter (the guard's, and the analysis
// of run lines) is bounded in memory as in steps and time. The interpreter
// has no hook on assignments, so AddMemChecks puts a call of MemCheck
// before every statement: there the call handler (CheckMemory) measures
// the shell's variables and positional parameters, and stops the run past
// MaxVars bytes. One statement between two checks grows them at most by
// its expansions, which Weight bounds: a string doubled in a loop stops
// near MaxVars instead of exhausting the hook's memory (Go's out-of-memory
// is fatal, past any recover).
const (
	MemCheck  = "__stopgate_mem_check" // the command AddMemChecks inserts
	MaxVars   = 256 << 10              // bytes of variables and parameters one shell holds
	MaxWeight = 256                    // expansions in one script, weighted by what each can copy
	MaxRead   = 1 << 20                // bytes a command substitution yields, and ReadFile reads of a file, in a dry run
)

// MaxPrinted bounds what the builtins and stubs of one dry run print: a
// loop inside $(…) keeps its output in memory, which no variable holds yet.
const MaxPrinted = 16 << 20

// ErrMemory stops a run past MaxVars or MaxPrinted.
var ErrMemory = errors.New("dry run over its memory bound")

// guarded returns list with a MemCheck before each statement, once.
// A statement that reads PIPESTATUS keeps the statement before it
// adjacent (the check passes $? on, not PIPESTATUS); pipestatus says
// whether any statement may.
func guarded(list []*syntax.Stmt, pipestatus bool) []*syntax.Stmt {
	out := make([]*syntax.Stmt, 0, 2*len(list))
	for i, st := range list {
		if !isMemCheck(st) && (i == 0 || !isMemCheck(list[i-1])) && !(pipestatus && readsPipestatus(st)) {
			out = append(out, memCheckStmt())
		}
		out = append(out, st)
	}
	return out
}

// guardedStmt wraps st (the right side of && || |) in a block that checks
// first.
func guardedStmt(st *syntax.Stmt) *syntax.Stmt {
	if st == nil || isMemCheck(st) {
		return st
	}
	if b, ok := st.Cmd.(*syntax.Block); ok && len(b.Stmts) > 0 && isMemCheck(b.Stmts[0]) {
		return st
	}
	return &syntax.Stmt{Position: st.Position, Cmd: &syntax.Block{Lbrace: st.Position, Rbrace: st.End(), Stmts: []*syntax.Stmt{memCheckStmt(), st}}}
}

// AddMemChecks puts the checks into every statement list of f.
func AddMemChecks(f syntax.Node) {
	pipestatus := readsPipestatus(f) // the per-statement search below is only needed then
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.File:
			n.Stmts = guarded(n.Stmts, pipestatus)
		case *syntax.Block:
			n.Stmts = guarded(n.Stmts, pipestatus)
		case *syntax.Subshell:
			n.Stmts = guarded(n.Stmts, pipestatus)
		case *syntax.IfClause:
			n.Cond, n.Then = guarded(n.Cond, pipestatus), guarded(n.Then, pipestatus)
		case *syntax.WhileClause:
			n.Cond, n.Do = guarded(n.Cond, pipestatus), guarded(n.Do, pipestatus)
		case *syntax.ForClause:
			n.Do = guarded(n.Do, pipestatus)
		case *syntax.CaseItem:
			n.Stmts = guarded(n.Stmts, pipestatus)
		case *syntax.CmdSubst:
			n.Stmts = guarded(n.Stmts, pipestatus)
		case *syntax.BinaryCmd:
			n.Y = guardedStmt(n.Y)
		}
		return true
	})
}

// MaxNesting bounds how deep a script's syntax tree goes: every pass over
// it (the checks above, a dry run's recursion) costs more with depth, and
// no hand-written command comes near.
const MaxNesting = 400

// TooDeep reports whether f's syntax tree is deeper than MaxNesting.
func TooDeep(f syntax.Node) bool {
	depth, deepest := 0, 0
	syntax.Walk(f, func(n syntax.Node) bool {
		if n == nil {
			depth--
			return true
		}
		depth++
		deepest = max(deepest, depth)
		return deepest <= MaxNesting
	})
	return deepest > MaxNesting
}

func memCheckStmt() *syntax.Stmt {
	return &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{{Parts: []syntax.WordPart{&syntax.Lit{Value: MemCheck}}}}}}
}

func isMemCheck(st *syntax.Stmt) bool {
	c, ok := st.Cmd.(*syntax.CallExpr)
	return ok && len(c.Assigns) == 0 && len(c.Args) > 0 && c.Args[0].Lit() == MemCheck
}

func readsPipestatus(n syntax.Node) bool {
	found := false
	syntax.Walk(n, func(n syntax.Node) bool {
		if p, ok := n.(*syntax.ParamExp); ok && p.Param != nil && p.Param.Value == "PIPESTATUS" {
			found = true
		}
		return !found
	})
	return found
}

// CheckMemory is the call handler's answer to a MemCheck: the command to
// run instead (which passes $? on: the exec handler answers it with
// Status), or ErrMemory past MaxVars.
func CheckMemory(hc interp.HandlerContext) ([]string, error) {
	if held(hc.Env) > MaxVars {
		return nil, ErrMemory
	}
	return []string{MemCheck, strconv.Itoa(hc.LastExitStatus)}, nil
}

// held is the bytes of env's variables and positional parameters, each
// element of a list counted with its string header.
func held(env expand.Environ) int {
	const header = 16
	n := 0
	env.Each(func(name string, v expand.Variable) bool {
		n += len(name) + len(v.Str)
		for _, s := range v.List {
			n += header + len(s)
		}
		for k, s := range v.Map {
			n += 2*header + len(k) + len(s)
		}
		return n <= MaxVars
	})
	for _, s := range env.Get("@").List {
		n += header + len(s)
	}
	return n
}

// memory answers a MemCheck, and stops a call whose arguments, or what
// the run printed with them, are over the bounds; done is false for any
// other call.
func memory(hc interp.HandlerContext, args []string, printed *atomic.Int64) (_ []string, _ error, done bool) {
	if args[0] == MemCheck {
		args, err := CheckMemory(hc)
		return args, err, true
	}
	if ArgsTooBig(args) || printed.Add(int64(Printed(args, hc.Env))) > MaxPrinted {
		return nil, ErrMemory, true
	}
	return nil, nil, false
}

// ArgsTooBig reports whether a call's arguments, or the text a printf
// would make of them, exceed MaxVars: `f "$@" "$@"` doubles parameters
// without any assignment, `printf '%*s' 999999999` builds one string.
func ArgsTooBig(args []string) bool {
	n := 0
	for _, a := range args {
		n += 16 + len(a)
	}
	if n > MaxVars {
		return true
	}
	if args[0] != "printf" {
		return false
	}
	for i, a := range args[1:] {
		if i > 0 && args[i] == "-v" {
			continue
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			return formatTooBig(a, args[i+2:])
		}
	}
	return false
}

// formatTooBig reports whether a printf format asks for a width or
// precision past MaxVars, literally or through * from its arguments.
func formatTooBig(format string, rest []string) bool {
	star := false
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("-+ #0.123456789*", format[j]) >= 0 {
			if format[j] == '*' {
				star = true
			}
			j++
		}
		for _, f := range strings.FieldsFunc(format[i+1:j], func(r rune) bool { return r < '0' || r > '9' }) {
			if len(f) > 7 || atoi(f) > MaxVars {
				return true
			}
		}
		i = j - 1
	}
	if star {
		for _, a := range rest {
			if n, err := strconv.Atoi(strings.TrimSpace(a)); err == nil && (n > MaxVars || n < -MaxVars) {
				return true
			}
		}
	}
	return false
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// Weight is what expansions in f can copy between two checks, in units
// of MaxVars: a parameter or a command's output once; a pattern
// substitution copies its replacement for every match, so its weight is
// the replacement's length, and a replacement that expands anything
// (${x//?/$x} squares x) is past the bound.
func Weight(f syntax.Node) int {
	w := 0
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			w++
			if n.Repl != nil && n.Repl.With != nil {
				for _, p := range n.Repl.With.Parts {
					size, ok := literalSize(p)
					if !ok {
						w += MaxWeight + 1
					}
					w += size
				}
			}
		case *syntax.CmdSubst:
			w += MaxRead / MaxVars
		}
		return w <= MaxWeight
	})
	return w
}

// Status is the exec handler's answer to the command CheckMemory returned:
// whether args is that command, and the status it passes on as the
// handler's error.
func Status(args []string) (bool, error) {
	if len(args) != 2 || args[0] != MemCheck {
		return false, nil
	}
	if n := uint8(atoi(args[1])); n != 0 {
		return true, interp.ExitStatus(n)
	}
	return true, nil
}

// Printed is how much the call args prints at most, for the builtins that
// print (echo, printf with its format repeated over its arguments, the
// listings of set and declare); 0 for anything else.
func Printed(args []string, env expand.Environ) int {
	n := 0
	for _, a := range args[1:] {
		n += len(a) + 1
	}
	switch args[0] {
	case "echo":
		return n
	case "printf":
		if len(args) > 1 {
			return n + len(args[1])*len(args)
		}
		return n
	case "set", "declare", "typeset", "export", "readonly", "local", "alias":
		return n + held(env)
	}
	return 0
}

// literalSize is the length of a word part that expands nothing (text,
// quoted or not: the escapes Prepare quotes among them), and whether it
// is one.
func literalSize(p syntax.WordPart) (int, bool) {
	switch p := p.(type) {
	case *syntax.Lit:
		return len(p.Value), true
	case *syntax.SglQuoted:
		return len(p.Value), !p.Dollar
	case *syntax.DblQuoted:
		n := 0
		for _, q := range p.Parts {
			size, ok := literalSize(q)
			if !ok {
				return 0, false
			}
			n += size
		}
		return n, true
	}
	return 0, false
}

// Bounds on a script's size, checked before a dry run: its cost grows
// with them, and no hand-written command comes near.
const (
	maxCommands = 500  // simple commands and pipes in the text
	maxBraces   = 1024 // words one brace expansion makes
)

// TooBig says why f is too large to dry-run, or "".
func TooBig(f *syntax.File) string {
	n, braces := 0, 0
	syntax.Walk(f, func(node syntax.Node) bool {
		switch node := node.(type) {
		case *syntax.CallExpr:
			if len(node.Args) == 0 || node.Args[0].Lit() != MemCheck {
				n++
			}
		case *syntax.BinaryCmd:
			n++
		case *syntax.Word:
			braces = max(braces, braceCount(node))
		}
		return n <= maxCommands && braces <= maxBraces
	})
	switch {
	case n > maxCommands:
		return "it has more commands than the guard's dry run follows"
	case braces > maxBraces:
		return "its brace expansions make more words than the guard's dry run follows"
	case Weight(f) > MaxWeight:
		return "it expands more text than the guard's dry run holds in memory"
	}
	return ""
}

// braceCount is how many words w's brace expansion makes, capped above
// maxBraces.
func braceCount(w *syntax.Word) int {
	if !strings.Contains(w.Lit(), "{") && w.Lit() != "" {
		return 1
	}
	w2 := &syntax.Word{Parts: append([]syntax.WordPart(nil), w.Parts...)}
	if !syntax.SplitBraces(w2) {
		return 1
	}
	return partsCount(w2.Parts)
}

func partsCount(parts []syntax.WordPart) int {
	total := 1
	for _, p := range parts {
		b, ok := p.(*syntax.BraceExp)
		if !ok {
			continue
		}
		n := 0
		if b.Sequence {
			n = seqLen(b)
		} else {
			for _, e := range b.Elems {
				n += partsCount(e.Parts)
			}
		}
		total *= max(n, 1)
		if total > maxBraces {
			return maxBraces + 1
		}
	}
	return total
}

// seqLen is the length of {x..y}: letters or numbers, capped.
func seqLen(b *syntax.BraceExp) int {
	if len(b.Elems) < 2 {
		return 1
	}
	x, y := b.Elems[0].Lit(), b.Elems[1].Lit()
	a, errA := strconv.Atoi(x)
	c, errC := strconv.Atoi(y)
	if errA != nil || errC != nil {
		if len(x) != 1 || len(y) != 1 {
			return 1
		}
		a, c = int(x[0]), int(y[0]) // letters
	}
	return min(max(a-c, c-a)+1, maxBraces+1)
}

// Prepare readies a parsed script for a dry run in mvdan.cc/sh's
// interpreter: the escapes the interpreter would read otherwise than the
// shell are written as quotes (quoteWordEscapes), and the memory checks go in
// (AddMemChecks). Every script the guard or this package dry-runs is
// prepared with it.
func Prepare(f syntax.Node) {
	quoteWordEscapes(f)
	AddMemChecks(f)
}

// quoteWordEscapes rewrites the backslash escapes of the unquoted words
// the interpreter (v3.14.1) reads without removing them, as quotes: the
// value of an assignment (f=mapping\s.toml; export f=…; local f=…) or of
// an array element, a redirection's target (> mapping\s.toml, < …), and
// the words of a parameter expansion
// (${x:-mapping\s.toml}, ${f/x/y\z}; see also Anchored). The shell reads each of these as
// mappings.toml, the interpreter as mapping\s.toml, so a dry run would
// judge another file than the one the command goes on to write: a way
// around the tamper guard. A command's arguments it reads right, and a
// word inside double quotes keeps its backslashes in the shell too.
func quoteWordEscapes(f syntax.Node) {
	quoted := map[*syntax.Lit]bool{} // text inside double quotes
	var mark func(n syntax.Node, inQuotes bool)
	mark = func(n syntax.Node, inQuotes bool) {
		syntax.Walk(n, func(m syntax.Node) bool {
			var stmts []*syntax.Stmt
			switch m := m.(type) {
			case *syntax.Lit:
				if inQuotes {
					quoted[m] = true
				}
			case *syntax.DblQuoted:
				if !inQuotes {
					for _, p := range m.Parts {
						mark(p, true)
					}
					return false
				}
			case *syntax.CmdSubst:
				stmts = m.Stmts
			case *syntax.ProcSubst:
				stmts = m.Stmts
			}
			if !inQuotes || stmts == nil {
				return true
			}
			for _, st := range stmts { // quoting starts afresh inside "$(…)"
				mark(st, false)
			}
			return false
		})
	}
	mark(f, false)
	rewrite := func(w *syntax.Word) {
		if w == nil {
			return
		}
		var parts []syntax.WordPart
		for _, p := range w.Parts {
			if lit, ok := p.(*syntax.Lit); ok && !quoted[lit] && strings.Contains(lit.Value, `\`) {
				parts = append(parts, quoteEscapes(lit.Value)...)
			} else {
				parts = append(parts, p)
			}
		}
		w.Parts = parts
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.Assign:
			rewrite(n.Value)
		case *syntax.ArrayElem:
			rewrite(n.Value)
		case *syntax.Redirect:
			if n.Op != syntax.Hdoc && n.Op != syntax.DashHdoc {
				rewrite(n.Word) // > mapping\s.toml; a here-document's delimiter is left as written
			}
		case *syntax.ParamExp:
			if n.Exp != nil {
				rewrite(n.Exp.Word)
			}
			if n.Repl != nil {
				rewrite(n.Repl.Orig)
				rewrite(n.Repl.With)
			}
		}
		return true
	})
}

// quoteEscapes writes the escapes of an unquoted literal (\c) as quoted
// characters ('c', or "'" for a quote), which the interpreter and its
// printer read as the shell reads the escape; an escaped newline, a line
// continuation, is dropped, as the shell drops it.
func quoteEscapes(s string) []syntax.WordPart {
	var parts []syntax.WordPart
	var run strings.Builder
	flush := func() {
		if run.Len() > 0 {
			parts = append(parts, &syntax.Lit{Value: run.String()})
			run.Reset()
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			run.WriteByte(s[i])
			continue
		}
		i++
		if s[i] == '\n' {
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		c := s[i : i+size]
		i += size - 1
		flush()
		if c == "'" {
			parts = append(parts, &syntax.DblQuoted{Parts: []syntax.WordPart{&syntax.Lit{Value: c}}})
		} else {
			parts = append(parts, &syntax.SglQuoted{Value: c})
		}
	}
	flush()
	return parts
}

// Anchored reports whether f holds an anchored replacement (${f/#x/y},
// ${f/%x/y}). The interpreter has none, and leaves the value as it was
// where the shell may replace; no rewrite in words it reads gives the
// shell's answer, so the guard takes such a script for one it cannot
// follow to the end.
func Anchored(f syntax.Node) bool {
	found := false
	syntax.Walk(f, func(n syntax.Node) bool {
		if p, ok := n.(*syntax.ParamExp); ok && p.Repl != nil && p.Repl.Orig != nil && len(p.Repl.Orig.Parts) > 0 {
			if lit, ok := p.Repl.Orig.Parts[0].(*syntax.Lit); ok && lit.Value != "" && (lit.Value[0] == '#' || lit.Value[0] == '%') {
				found = true
			}
		}
		return !found
	})
	return found
}
