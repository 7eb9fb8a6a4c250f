package guard

import (
	"github.com/stopgate/stopgate/internal/shell"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Paths are compared as clean absolute slash paths. A protected path P is
// hit by a write to P or anything under it; a destructive operation (rm,
// mv away, chmod) also hits when its operand is an ancestor of P, since
// removing tmp removes tmp/validation.

type mode uint8

const (
	under   mode = iota // writes the operand: hits P and what lies under P
	destroy             // removes or replaces the operand: also hits P's ancestors
)

// pathHit reports whether an operation in mode m on the literal path p
// reaches the protected path prot.
func pathHit(p, prot string, m mode) bool {
	return shell.Within(p, prot) || m == destroy && shell.Within(prot, p)
}

// globHit is pathHit for a glob pattern: it hits when it can match prot,
// a path under prot or, in destroy mode, an ancestor of prot. The shell
// matches each path component separately, and * does not match a leading
// dot, so neither does this.
func globHit(pat, prot string, m mode) bool {
	pc, tc := components(pat), components(prot)
	if len(pc) < len(tc) && m != destroy {
		return false
	}
	for i := 0; i < min(len(pc), len(tc)); i++ {
		if !matchComponent(pc[i], tc[i]) {
			return false
		}
	}
	return true
}

func components(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

func matchComponent(pat, name string) bool {
	if strings.HasPrefix(name, ".") && !strings.HasPrefix(pat, ".") && !strings.HasPrefix(pat, `\.`) {
		return false
	}
	ok, err := path.Match(pat, name)
	if err != nil {
		return unescape(pat) == name // a malformed pattern is taken literally, as the shell does
	}
	return ok
}

// resolve returns p with symlinks resolved, as far as p exists: the
// longest existing prefix is resolved and the rest appended, so a path a
// write would create through a symlinked folder is judged where it lands.
func resolve(p string) string {
	rest := ""
	for cur := p; ; {
		if real, err := filepath.EvalSymlinks(cur); err == nil {
			return filepath.ToSlash(filepath.Join(real, rest))
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// resolvePattern resolves the symlinks of a pattern's literal leading
// folders.
func resolvePattern(pat string) string {
	cs := components(pat)
	i := 0
	for i < len(cs) && !hasMeta(cs[i]) {
		i++
	}
	prefix := "/" + strings.Join(cs[:i], "/")
	real := resolve(unescape(prefix))
	if real == unescape(prefix) {
		return pat
	}
	return path.Join(append([]string{escape(real)}, cs[i:]...)...)
}

// ancestors returns dir and every folder above it.
func ancestors(dir string) []string {
	var out []string
	for {
		out = append(out, dir)
		parent := path.Dir(dir)
		if parent == dir {
			return out
		}
		dir = parent
	}
}

// Pattern escaping: a literal character special to path.Match or to brace
// expansion is preceded by a backslash.

const special = `\*?[]{},`

func escape(s string) string {
	if !strings.ContainsAny(s, special) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(special, s[i]) >= 0 {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// hasMeta reports an unescaped *, ? or [.
func hasMeta(s string) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '*', '?', '[':
			return true
		}
	}
	return false
}

// isDir reports whether p names a folder.
func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
