package shell

import (
	"errors"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// A dry run is bounded in memory (Go's out-of-memory is fatal): a memCheck call before every
// statement measures the variables, which one statement grows by its expansions (tooBig weighs them).
const (
	memCheck   = "__stopgate_mem_check"
	maxVars    = 256 << 10 // bytes of variables and parameters one shell holds
	maxWeight  = 256       // expansions in one script, weighted by what each can copy
	MaxRead    = 1 << 20   // bytes a dry run reads of a file or a command substitution
	maxPrinted = 16 << 20  // bytes builtins and stubs print: $(loop) keeps it in memory
	maxNesting = 400       // depth of a syntax tree
	maxCmds    = 500       // simple commands and pipes in a script
	maxBraces  = 1024      // words one brace expansion makes
)

var errMemory = errors.New("dry run over its memory bound")

var printfSpec = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`%[-+ #.0-9*]*`) })

func guarded(list []*syntax.Stmt) []*syntax.Stmt {
	out := make([]*syntax.Stmt, 0, 2*len(list))
	for i, st := range list {
		if !isMemCheck(st) && (i == 0 || !isMemCheck(list[i-1])) {
			out = append(out, call(memCheck))
		}
		out = append(out, st)
	}
	return out
}

func addMemChecks(f syntax.Node) {
	syntax.Walk(f, func(n syntax.Node) bool {
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
			if st := n.Y; st == nil || isMemCheck(st) {
				break
			} else if b, ok := st.Cmd.(*syntax.Block); ok && len(b.Stmts) > 0 && isMemCheck(b.Stmts[0]) {
				break
			}
			n.Y = &syntax.Stmt{Position: n.Y.Position, Cmd: &syntax.Block{Lbrace: n.Y.Position, Rbrace: n.Y.End(), Stmts: []*syntax.Stmt{call(memCheck), n.Y}}}
		}
		return true
	})
}

func call(name string) *syntax.Stmt {
	return &syntax.Stmt{Cmd: &syntax.CallExpr{Args: []*syntax.Word{{Parts: []syntax.WordPart{&syntax.Lit{Value: name}}}}}}
}

func isMemCheck(st *syntax.Stmt) bool {
	c, ok := st.Cmd.(*syntax.CallExpr)
	return ok && len(c.Assigns) == 0 && len(c.Args) > 0 && c.Args[0].Lit() == memCheck
}

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

// argsTooBig: a call's arguments, or a printf's text, exceed maxVars (`f "$@" "$@"`, `printf '%*s' 999999999`).
func argsTooBig(args []string) bool {
	n := 0
	for _, a := range args {
		n += 16 + len(a)
	}
	if n > maxVars || args[0] != "printf" {
		return n > maxVars
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

// formatTooBig reports a printf width or precision past maxVars, literal or by * from rest.
func formatTooBig(format string, rest []string) bool {
	specs := strings.Join(printfSpec().FindAllString(format, -1), "") // each starts with %: numbers stay apart
	for _, f := range strings.FieldsFunc(specs, func(r rune) bool { return r < '0' || r > '9' }) {
		if n, _ := strconv.Atoi(f); len(f) > 7 || n > maxVars {
			return true
		}
	}
	for _, a := range rest {
		if n, err := strconv.Atoi(strings.TrimSpace(a)); strings.Contains(specs, "*") && err == nil && (n > maxVars || n < -maxVars) {
			return true
		}
	}
	return false
}

func printedBy(args []string, env expand.Environ) int {
	n := 0
	for _, a := range args[1:] {
		n += len(a) + 1
	}
	switch args[0] {
	case "echo":
		return n
	case "printf": // its format once per argument
		return n + len(strings.Join(args[1:min(2, len(args))], ""))*len(args)
	case "set", "declare", "typeset", "export", "readonly", "local", "alias":
		return n + held(env)
	}
	return 0
}

// literalSize is the length of a word part that expands nothing, else past maxWeight.
func literalSize(p syntax.WordPart) int {
	switch p := p.(type) {
	case *syntax.Lit:
		return len(p.Value)
	case *syntax.SglQuoted:
		if !p.Dollar {
			return len(p.Value)
		}
	case *syntax.DblQuoted:
		n := 0
		for _, q := range p.Parts {
			n += literalSize(q)
		}
		return n
	}
	return maxWeight + 1
}

// tooBig says why f is too large to dry-run (stop), or a doubt it runs with, or "" (cmds:
// count commands). A substitution copies its replacement per match: one expanding anything
// (${x//?/$x} squares x) is past the bound.
func tooBig(f *syntax.File, cmds bool) (why string, stop bool) {
	n, braces, weight, anchored := 0, 0, 0, false
	syntax.Walk(f, func(node syntax.Node) bool {
		switch node := node.(type) {
		case *syntax.CallExpr:
			if len(node.Args) == 0 || node.Args[0].Lit() != memCheck {
				n++
			}
		case *syntax.BinaryCmd:
			n++
		case *syntax.Word:
			braces = max(braces, braceCount(node))
		case *syntax.ParamExp:
			weight++
			if r := node.Repl; r != nil && r.Orig != nil && len(r.Orig.Parts) > 0 {
				lit, ok := r.Orig.Parts[0].(*syntax.Lit) // ${f/#x/y}, ${f/%x/y}: the interpreter does not apply them
				anchored = anchored || ok && strings.IndexAny(lit.Value, "#%") == 0
			}
			if r := node.Repl; r != nil && r.With != nil {
				weight += literalSize(&syntax.DblQuoted{Parts: r.With.Parts})
			}
		case *syntax.CmdSubst:
			weight += MaxRead / maxVars
		}
		return (!cmds || n <= maxCmds) && braces <= maxBraces && weight <= maxWeight
	})
	switch {
	case cmds && n > maxCmds:
		return "it has more commands than the guard's dry run follows", true
	case braces > maxBraces:
		return "its brace expansions make more words than the guard's dry run follows", true
	case weight > maxWeight:
		return "it expands more text than the guard's dry run holds in memory", true
	case anchored:
		return "it uses an anchored replacement (${x/#…/…}, ${x/%…/…}), which the guard's dry run does not apply", false
	}
	return "", false
}

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

// quoteWordEscapes quotes the backslash escapes the interpreter (v3.14.1) keeps and bash
// removes in assignments, array elements, redirections and expansions (f=mapping\s.toml).
func quoteWordEscapes(n syntax.Node) {
	syntax.Walk(n, func(m syntax.Node) bool {
		switch m := m.(type) {
		case *syntax.DblQuoted: // as written, but for the scripts it substitutes
			syntax.Walk(m, func(k syntax.Node) bool {
				if cs, ok := k.(*syntax.CmdSubst); ok {
					quoteWordEscapes(cs)
					return false
				}
				return true
			})
			return false
		case *syntax.Assign:
			quoteEscapes(m.Value)
		case *syntax.ArrayElem:
			quoteEscapes(m.Value)
		case *syntax.Redirect:
			if m.Op != syntax.Hdoc && m.Op != syntax.DashHdoc { // a delimiter stays as written
				quoteEscapes(m.Word)
			}
		case *syntax.ParamExp:
			if m.Exp != nil {
				quoteEscapes(m.Exp.Word)
			}
			if m.Repl != nil {
				quoteEscapes(m.Repl.Orig)
				quoteEscapes(m.Repl.With)
			}
		}
		return true
	})
}

// quoteEscapes writes w's unquoted escapes (\c) as quoted characters ('c', or "'"); bash drops an escaped newline.
func quoteEscapes(w *syntax.Word) {
	if w == nil {
		return
	}
	var parts []syntax.WordPart
	for _, p := range w.Parts {
		lit, ok := p.(*syntax.Lit)
		if !ok || !strings.Contains(lit.Value, `\`) {
			parts = append(parts, p)
			continue
		}
		at := 0
		for _, m := range escapedChar().FindAllStringSubmatchIndex(lit.Value, -1) {
			if m[0] > at {
				parts = append(parts, &syntax.Lit{Value: lit.Value[at:m[0]]})
			}
			switch c := lit.Value[m[2]:m[3]]; c {
			case "\n": // dropped
			case "'":
				parts = append(parts, &syntax.DblQuoted{Parts: []syntax.WordPart{&syntax.Lit{Value: c}}})
			default:
				parts = append(parts, &syntax.SglQuoted{Value: c})
			}
			at = m[1]
		}
		if at < len(lit.Value) {
			parts = append(parts, &syntax.Lit{Value: lit.Value[at:]})
		}
	}
	w.Parts = parts
}

// Unescape is s with its backslash escapes removed (\c is c).
func Unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	return escapedChar().ReplaceAllString(s, "$1")
}

var escapedChar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?s)\\(.)`) })
