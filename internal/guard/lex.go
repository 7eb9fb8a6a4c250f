package guard

import "strings"

// A small POSIX-shell lexer: just enough of the grammar to find the words
// and redirections of each simple command in a Bash tool call, never to run
// or fully parse it. It knows quoting ('…', "…", $'…', backslashes), command
// and process substitution, parameters, here-documents, comments and the
// control operators; everything it cannot resolve statically is marked
// unknown rather than guessed.
//
// A word is kept as a glob pattern: characters that were quoted or escaped,
// and so are literal, carry a backslash before any of \*?[]{}, , which is
// what path.Match and the brace expansion below understand.

type partKind uint8

const (
	partLit     partKind = iota // pattern text
	partParam                   // $NAME or ${NAME…}: text is NAME
	partTilde                   // a leading ~ or ~/
	partUnknown                 // $(…), `…`, $1, ${#x}: no static value
)

type part struct {
	kind partKind
	text string
}

type rawWord []part

type redirect struct {
	op     string // ">", ">>", ">|", "&>", "&>>", "<>", ">&"
	target rawWord
}

// command is one simple command: its words, output redirections and the
// bodies of its here-documents and here-strings (its stdin).
type command struct {
	words     []rawWord
	redirects []redirect
	stdin     []string
	pipeline  int    // commands joined by | share one
	src       string // the command's text, for messages
}

type heredoc struct {
	cmd    *command
	delim  string
	strip  bool // <<- strips leading tabs
	quoted bool // a quoted delimiter: the body is not expanded
}

type lexer struct {
	s        string
	pos      int
	cmds     []*command
	cur      *command
	start    int // where cur began
	pipeline int
	pending  []heredoc
	nested   []string // command texts from $(…), `…`, <(…), >(…) and unquoted here-documents
}

// lex splits src into simple commands and the command strings nested in it.
func lex(src string) (cmds []*command, nested []string) {
	l := &lexer{s: src}
	l.run()
	return l.cmds, l.nested
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' }

// isMeta reports the characters that end an unquoted word.
func isMeta(c byte) bool {
	switch c {
	case ' ', '\t', '\r', '\n', ';', '&', '|', '(', ')', '<', '>':
		return true
	}
	return false
}

func (l *lexer) peek(n int) byte {
	if l.pos+n < len(l.s) {
		return l.s[l.pos+n]
	}
	return 0
}

func (l *lexer) command() *command {
	if l.cur == nil {
		l.cur = &command{pipeline: l.pipeline}
	}
	return l.cur
}

// end closes the current simple command; a new pipeline starts unless the
// command was ended by a pipe.
func (l *lexer) end(newPipeline bool) {
	if c := l.cur; c != nil {
		if len(c.words) > 0 || len(c.redirects) > 0 || len(c.stdin) > 0 {
			c.src = strings.TrimSpace(l.s[l.start:min(l.pos, len(l.s))])
			l.cmds = append(l.cmds, c)
		}
		l.cur = nil
	}
	if newPipeline {
		l.pipeline++
	}
}

func (l *lexer) run() {
	for l.pos < len(l.s) {
		if l.cur == nil {
			l.start = l.pos
		}
		c := l.s[l.pos]
		switch {
		case isBlank(c):
			l.pos++
		case c == '\\' && l.peek(1) == '\n':
			l.pos += 2
		case c == '\n':
			l.end(true)
			l.pos++
			l.heredocs()
		case c == '#':
			for l.pos < len(l.s) && l.s[l.pos] != '\n' {
				l.pos++
			}
		case c == ';':
			l.end(true)
			for l.pos < len(l.s) && (l.s[l.pos] == ';' || l.s[l.pos] == '&') {
				l.pos++
			}
		case c == '&' && l.peek(1) == '>':
			l.redirect()
		case c == '&':
			l.end(true)
			l.pos++
			if l.peek(0) == '&' {
				l.pos++
			}
		case c == '|':
			double := l.peek(1) == '|'
			l.end(double)
			l.pos++
			if l.peek(0) == '|' || l.peek(0) == '&' {
				l.pos++
			}
		case c == '(' || c == ')':
			l.end(true)
			l.pos++
		case (c == '<' || c == '>') && l.peek(1) == '(':
			end := matchParen(l.s, l.pos+2)
			l.nested = append(l.nested, l.s[l.pos+2:end])
			l.pos = min(end+1, len(l.s))
			cmd := l.command()
			cmd.words = append(cmd.words, rawWord{{kind: partUnknown}})
		case c == '<' || c == '>':
			l.redirect()
		default:
			from := l.pos
			w := l.word()
			if (l.peek(0) == '<' || l.peek(0) == '>') && allDigits(l.s[from:l.pos]) {
				l.redirect() // 2>file: the digits name a descriptor
				continue
			}
			cmd := l.command()
			cmd.words = append(cmd.words, w)
		}
	}
	l.end(true)
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

var redirectOps = []string{"&>>", "&>", ">>", ">|", ">&", "<<<", "<<-", "<<", "<>", "<&", ">", "<"}

func (l *lexer) redirect() {
	op := ""
	for _, o := range redirectOps {
		if strings.HasPrefix(l.s[l.pos:], o) {
			op = o
			break
		}
	}
	l.pos += len(op)
	for l.pos < len(l.s) && isBlank(l.s[l.pos]) {
		l.pos++
	}
	if l.pos >= len(l.s) || isMeta(l.s[l.pos]) {
		return // a syntax error the shell will report
	}
	from := l.pos
	target := l.word()
	cmd := l.command()
	switch op {
	case ">", ">>", ">|", "&>", "&>>", "<>":
		cmd.redirects = append(cmd.redirects, redirect{op: op, target: target})
	case ">&":
		if lit := literal(target); lit != "-" && !allDigits(lit) {
			cmd.redirects = append(cmd.redirects, redirect{op: op, target: target})
		}
	case "<<", "<<-":
		raw := l.s[from:l.pos]
		l.pending = append(l.pending, heredoc{
			cmd: cmd, delim: literal(target), strip: op == "<<-",
			quoted: strings.ContainsAny(raw, `'"\`),
		})
	case "<<<":
		cmd.stdin = append(cmd.stdin, literal(target))
	}
}

// heredocs reads the bodies of the here-documents opened on the line just
// ended.
func (l *lexer) heredocs() {
	for _, h := range l.pending {
		var body strings.Builder
		for l.pos < len(l.s) {
			nl := strings.IndexByte(l.s[l.pos:], '\n')
			line := l.s[l.pos:]
			if nl >= 0 {
				line = line[:nl]
			}
			l.pos += len(line) + 1
			check := line
			if h.strip {
				check = strings.TrimLeft(check, "\t")
			}
			if check == h.delim {
				break
			}
			body.WriteString(line)
			body.WriteByte('\n')
		}
		l.pos = min(l.pos, len(l.s))
		text := body.String()
		h.cmd.stdin = append(h.cmd.stdin, text)
		if !h.quoted {
			l.nested = append(l.nested, substitutions(text)...)
		}
	}
	l.pending = l.pending[:0]
}

// word reads one word at l.pos.
func (l *lexer) word() rawWord {
	var w rawWord
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			w = append(w, part{kind: partLit, text: lit.String()})
			lit.Reset()
		}
	}
	add := func(p part) {
		flush()
		w = append(w, p)
	}
	begin := l.pos
	for l.pos < len(l.s) {
		c := l.s[l.pos]
		if isMeta(c) {
			break
		}
		switch c {
		case '\'':
			end := strings.IndexByte(l.s[l.pos+1:], '\'')
			if end < 0 {
				end = len(l.s) - l.pos - 1
			}
			lit.WriteString(escape(l.s[l.pos+1 : l.pos+1+end]))
			l.pos += end + 2
		case '"':
			l.pos++
			l.double(&lit, add)
		case '\\':
			if l.peek(1) == '\n' {
				l.pos += 2
				continue
			}
			if l.pos+1 < len(l.s) {
				lit.WriteString(escape(l.s[l.pos+1 : l.pos+2]))
			}
			l.pos += 2
		case '$':
			l.dollar(&lit, add, false)
		case '`':
			l.backtick()
			add(part{kind: partUnknown})
		case '~':
			if l.pos == begin && (l.peek(1) == '/' || l.pos+1 >= len(l.s) || isMeta(l.peek(1))) {
				add(part{kind: partTilde})
			} else {
				lit.WriteByte(c)
			}
			l.pos++
		default:
			lit.WriteByte(c)
			l.pos++
		}
	}
	l.pos = min(l.pos, len(l.s))
	flush()
	if len(w) == 0 {
		w = rawWord{{kind: partLit}} // '' or "": an empty word
	}
	return w
}

// double reads the inside of "…", l.pos just after the opening quote.
func (l *lexer) double(lit *strings.Builder, add func(part)) {
	for l.pos < len(l.s) {
		c := l.s[l.pos]
		switch c {
		case '"':
			l.pos++
			return
		case '\\':
			switch n := l.peek(1); n {
			case '\n':
				l.pos += 2
			case '$', '`', '"', '\\':
				lit.WriteString(escape(string(n)))
				l.pos += 2
			default:
				lit.WriteString(escape(`\`))
				l.pos++
			}
		case '$':
			l.dollar(lit, add, true)
		case '`':
			l.backtick()
			add(part{kind: partUnknown})
		default:
			lit.WriteString(escape(string(c)))
			l.pos++
		}
	}
}

// dollar reads an expansion starting at $.
func (l *lexer) dollar(lit *strings.Builder, add func(part), quoted bool) {
	n := l.peek(1)
	switch {
	case n == '\'' && !quoted:
		end := l.pos + 2
		for end < len(l.s) && l.s[end] != '\'' {
			if l.s[end] == '\\' {
				end++
			}
			end++
		}
		end = min(end, len(l.s))
		lit.WriteString(escape(ansiC(l.s[l.pos+2 : end])))
		l.pos = end + 1
	case n == '"' && !quoted:
		l.pos += 2
		l.double(lit, add)
	case n == '(' && l.peek(2) == '(':
		l.pos = min(matchParen(l.s, l.pos+2)+1, len(l.s))
		add(part{kind: partUnknown})
	case n == '(':
		end := matchParen(l.s, l.pos+2)
		l.nested = append(l.nested, l.s[l.pos+2:end])
		l.pos = min(end+1, len(l.s))
		add(part{kind: partUnknown})
	case n == '{':
		end := strings.IndexByte(l.s[l.pos:], '}')
		if end < 0 {
			end = len(l.s) - l.pos
		}
		inner := l.s[l.pos+2 : l.pos+end]
		l.pos = min(l.pos+end+1, len(l.s))
		name := paramName(inner)
		if name == "" || (len(inner) > len(name) && !strings.ContainsRune(":-=?+", rune(inner[len(name)]))) {
			add(part{kind: partUnknown})
			return
		}
		l.nested = append(l.nested, substitutions(inner)...)
		add(part{kind: partParam, text: name})
	case isNameStart(n):
		end := l.pos + 1
		for end < len(l.s) && isNameChar(l.s[end]) {
			end++
		}
		add(part{kind: partParam, text: l.s[l.pos+1 : end]})
		l.pos = end
	case n != 0 && strings.IndexByte("@*#?$!-0123456789", n) >= 0:
		add(part{kind: partUnknown})
		l.pos += 2
	default:
		lit.WriteByte('$')
		l.pos++
	}
}

// backtick skips `…` at l.pos, keeping its text as a nested command.
func (l *lexer) backtick() {
	var inner strings.Builder
	i := l.pos + 1
	for i < len(l.s) && l.s[i] != '`' {
		if l.s[i] == '\\' && i+1 < len(l.s) && strings.IndexByte("`$\\", l.s[i+1]) >= 0 {
			i++
		}
		inner.WriteByte(l.s[i])
		i++
	}
	l.nested = append(l.nested, inner.String())
	l.pos = min(i+1, len(l.s))
}

// matchParen returns the index of the ) closing the ( just before from,
// skipping quoted text, or len(s).
func matchParen(s string, from int) int {
	depth := 1
	for i := from; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return len(s)
			}
			i += j + 1
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return len(s)
}

// substitutions returns the command texts of $(…) and `…` in text that the
// shell expands (a double-quoted string, an unquoted here-document).
func substitutions(text string) []string {
	var out []string
	for i := 0; i < len(text); i++ {
		switch {
		case text[i] == '\\':
			i++
		case text[i] == '$' && i+1 < len(text) && text[i+1] == '(':
			if i+2 < len(text) && text[i+2] == '(' {
				continue // arithmetic
			}
			end := matchParen(text, i+2)
			out = append(out, text[i+2:end])
			i = end
		case text[i] == '`':
			end := strings.IndexByte(text[i+1:], '`')
			if end < 0 {
				end = len(text) - i - 1
			}
			out = append(out, text[i+1:i+1+end])
			i += end + 1
		}
	}
	return out
}

func isNameStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isNameChar(c byte) bool  { return isNameStart(c) || c >= '0' && c <= '9' }

func paramName(s string) string {
	if s == "" || !isNameStart(s[0]) {
		return ""
	}
	i := 1
	for i < len(s) && isNameChar(s[i]) {
		i++
	}
	return s[:i]
}

// ansiC decodes the common escapes of $'…'.
func ansiC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch s[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'x':
			if i+2 < len(s) {
				if v, ok := hexByte(s[i+1 : i+3]); ok {
					b.WriteByte(v)
					i += 2
					continue
				}
			}
			b.WriteString(`\x`)
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

func hexByte(s string) (byte, bool) {
	var v byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | c
	}
	return v, true
}

// literal returns a word's text with quoting removed, dropping what has no
// static value: for delimiters, fd numbers and messages.
func literal(w rawWord) string {
	var b strings.Builder
	for _, p := range w {
		if p.kind == partLit {
			b.WriteString(unescape(p.text))
		}
	}
	return b.String()
}
