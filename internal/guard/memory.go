package guard

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// The dry run is bounded in memory as in steps and time. The interpreter
// has no hook on assignments, so prepare puts a call of memCheck before
// every statement: there the call handler measures the shell's variables
// and positional parameters, and stops the run past maxVars bytes. One
// statement between two checks grows them at most by its expansions, which
// tooBig bounds (maxWeight): a string doubled in a loop stops near
// maxVars instead of exhausting the hook's memory (Go's out-of-memory is
// fatal, past any recover).
const (
	memCheck  = "__stopgate_mem_check"
	maxVars   = 256 << 10 // bytes of variables and parameters one shell holds
	maxWeight = 256       // expansions in one script, weighted by what each can copy
)

// tooMuch is the doubt of a run stopped at maxVars.
const tooMuch = "the guard stopped its dry run: it builds more text than the guard's dry run holds in memory"

// guarded returns list with a memCheck before each statement, once.
// A statement that reads PIPESTATUS keeps the statement before it
// adjacent (the check passes $? on, not PIPESTATUS).
func guarded(list []*syntax.Stmt) []*syntax.Stmt {
	out := make([]*syntax.Stmt, 0, 2*len(list))
	for i, st := range list {
		if !isMemCheck(st) && (i == 0 || !isMemCheck(list[i-1])) && !readsPipestatus(st) {
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

// addMemChecks puts the checks into the statement lists of node n.
func addMemChecks(n syntax.Node) {
	switch n := n.(type) {
	case *syntax.File:
		n.Stmts = guarded(n.Stmts)
	case *syntax.Block:
		n.Stmts = guarded(n.Stmts)
	case *syntax.Subshell:
		n.Stmts = guarded(n.Stmts)
	case *syntax.IfClause:
		n.Cond, n.Then = guarded(n.Cond), guarded(n.Then)
	case *syntax.WhileClause:
		n.Cond, n.Do = guarded(n.Cond), guarded(n.Do)
	case *syntax.ForClause:
		n.Do = guarded(n.Do)
	case *syntax.CaseItem:
		n.Stmts = guarded(n.Stmts)
	case *syntax.CmdSubst:
		n.Stmts = guarded(n.Stmts)
	case *syntax.BinaryCmd:
		n.Y = guardedStmt(n.Y)
	}
}

func memCheckStmt() *syntax.Stmt {
	return &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{{Parts: []syntax.WordPart{&syntax.Lit{Value: memCheck}}}}}}
}

func isMemCheck(st *syntax.Stmt) bool {
	c, ok := st.Cmd.(*syntax.CallExpr)
	return ok && len(c.Assigns) == 0 && len(c.Args) > 0 && c.Args[0].Lit() == memCheck
}

func readsPipestatus(st *syntax.Stmt) bool {
	found := false
	syntax.Walk(st, func(n syntax.Node) bool {
		if p, ok := n.(*syntax.ParamExp); ok && p.Param != nil && p.Param.Value == "PIPESTATUS" {
			found = true
		}
		return !found
	})
	return found
}

// checkMemory is the call handler's answer to a memCheck: the command to
// run instead (which passes $? on), or errMemory past maxVars.
func checkMemory(hc interp.HandlerContext) ([]string, error) {
	if held(hc.Env) > maxVars {
		return nil, errMemory
	}
	return []string{memCheck, strconv.Itoa(hc.LastExitStatus)}, nil
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
		return n <= maxVars
	})
	for _, s := range env.Get("@").List {
		n += header + len(s)
	}
	return n
}

// argsTooBig reports whether a call's arguments, or the text a printf
// would make of them, exceed maxVars: `f "$@" "$@"` doubles parameters
// without any assignment, `printf '%*s' 999999999` builds one string.
func argsTooBig(args []string) bool {
	n := 0
	for _, a := range args {
		n += 16 + len(a)
	}
	if n > maxVars {
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
// precision past maxVars, literally or through * from its arguments.
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
			if len(f) > 7 || atoi(f) > maxVars {
				return true
			}
		}
		i = j - 1
	}
	if star {
		for _, a := range rest {
			if n, err := strconv.Atoi(strings.TrimSpace(a)); err == nil && (n > maxVars || n < -maxVars) {
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

// weight is what expansions in f can copy between two checks, in units
// of maxVars: a parameter or a command's output once; a pattern
// substitution copies its replacement for every match, so its weight is
// the replacement's length, and a replacement that expands anything
// (${x//?/$x} squares x) is past the bound.
func weight(f syntax.Node) int {
	w := 0
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.ParamExp:
			w++
			if n.Repl != nil && n.Repl.With != nil {
				for _, p := range n.Repl.With.Parts {
					if _, lit := p.(*syntax.Lit); !lit {
						w += maxWeight + 1
					}
				}
				w += len(n.Repl.With.Lit())
			}
		case *syntax.CmdSubst:
			w += maxRead / maxVars
		}
		return w <= maxWeight
	})
	return w
}
