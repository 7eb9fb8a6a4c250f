package shell

import (
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

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
