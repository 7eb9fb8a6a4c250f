package runline

import (
	"strings"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"
)

// Prepare readies a parsed script for a dry run in mvdan.cc/sh's
// interpreter: the escapes of its assignments are written as the
// interpreter reads them (quoteAssignEscapes), and the memory checks go in
// (AddMemChecks). Every script the guard or this package dry-runs is
// prepared with it.
func Prepare(f syntax.Node) {
	quoteAssignEscapes(f)
	AddMemChecks(f)
}

// quoteAssignEscapes rewrites the backslash escapes in the unquoted parts
// of assignment values (f=mapping\s.toml; export f=…; local f=…) as
// quotes. The shell reads f=mapping\s.toml as mappings.toml; the
// interpreter (v3.14.1) keeps the backslash there, though not in a
// command's arguments, so a dry run would judge another file than the
// one the command goes on to write: a way around the tamper guard.
func quoteAssignEscapes(f syntax.Node) {
	syntax.Walk(f, func(n syntax.Node) bool {
		as, ok := n.(*syntax.Assign)
		if !ok || as.Value == nil {
			return true
		}
		var parts []syntax.WordPart
		for _, p := range as.Value.Parts {
			if lit, ok := p.(*syntax.Lit); ok && strings.Contains(lit.Value, `\`) {
				parts = append(parts, quoteEscapes(lit.Value)...)
			} else {
				parts = append(parts, p)
			}
		}
		as.Value.Parts = parts
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
