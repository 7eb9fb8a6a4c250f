package shell

import (
	"strconv"
	"strings"

	"mvdan.cc/sh/v3/syntax"
)

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
