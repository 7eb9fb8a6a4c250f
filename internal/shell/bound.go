package shell

import (
	"errors"
	"strconv"
	"strings"
	"sync/atomic"

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
