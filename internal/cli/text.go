package cli

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

// The one implementation of each text job stopgate does in several places:
// clipping, keeping text on one line, spelling control characters out,
// shell quoting and naming signals.

// OneLine is s with every run of white space, newlines included, made one
// space and the ends trimmed: a log line, a table cell or a reason read as
// several when it breaks.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Clip returns s when it is at most n bytes long; else its first n bytes or
// fewer, cut at a rune boundary so it stays UTF-8, followed by more (an
// ellipsis, a note, or nothing).
func Clip(s string, n int, more string) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + more
}

// Visible returns s with every control character and every byte that is
// not UTF-8 spelled out: text the agent or a validator wrote reaches a
// terminal and the model, and an escape sequence there could rewrite what
// the user sees. Text without such characters is returned as it is.
//
// With oneLine, newline and tab are spelled out too, and every control
// character the way Go quotes it ("\n", "\a", "\x00"), so a message quoting
// the text it complains about stays one line. Without it, newline and tab
// stay, and the others are spelled \x1b, \u009b.
func Visible(s string, oneLine bool) string {
	if !needsEscape(s, oneLine) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !isControl(r, oneLine):
			b.WriteString(s[i : i+size])
		case oneLine:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += size
	}
	return b.String()
}

// isControl is a C0 or C1 control character or DEL; newline and tab count
// only when text must stay on one line.
func isControl(r rune, oneLine bool) bool {
	if r == '\n' || r == '\t' {
		return oneLine
	}
	return r < 0x20 || r >= 0x7f && r < 0xa0
}

func needsEscape(s string, oneLine bool) bool {
	if !utf8.ValidString(s) {
		return true
	}
	return strings.ContainsFunc(s, func(r rune) bool { return isControl(r, oneLine) })
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./+-]+$`)

// ShellQuote is s as one POSIX shell word: bare when nothing in it needs
// quoting, else single-quoted, which a shell and settings.FirstWord both
// read back as s. The guard's printf -v uses syntax.Quote instead:
// mvdan's interpreter keeps the backslash of \' in an assignment.
func ShellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// signalNames are the signals a process plausibly dies of.
var signalNames = map[syscall.Signal]string{
	syscall.SIGKILL: "SIGKILL", syscall.SIGTERM: "SIGTERM", syscall.SIGSEGV: "SIGSEGV",
	syscall.SIGABRT: "SIGABRT", syscall.SIGINT: "SIGINT", syscall.SIGHUP: "SIGHUP", syscall.SIGPIPE: "SIGPIPE",
	syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE", syscall.SIGILL: "SIGILL", syscall.SIGQUIT: "SIGQUIT",
	syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ",
}

// SignalName is a signal's short name, "SIGTERM", when it is one a
// process plausibly dies of; else its description.
func SignalName(sig os.Signal) string {
	if s, ok := sig.(syscall.Signal); ok && signalNames[s] != "" {
		return signalNames[s]
	}
	return sig.String()
}

// Plural is n with one or many, as its count takes it: "1 hook", "2 hooks".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
