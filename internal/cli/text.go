package cli

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"unicode/utf8"
)

// OneLine is s with each run of white space made one space, ends trimmed.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Clip cuts s to at most n bytes at a rune boundary, and then adds more.
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

// Visible returns s with control characters and bytes not UTF-8 spelled
// out (\x1b, \u009b), which could rewrite what the user sees; with
// oneLine, newline and tab too ("\n").
func Visible(s string, oneLine bool) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return isControl(r, oneLine) }) {
		return s
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], string(utf8.RuneError)): // a byte not UTF-8
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case !isControl(r, oneLine):
			b.WriteRune(r)
		case oneLine:
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		case r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// isControl is a C0 or C1 control or DEL; newline and tab only if oneLine.
func isControl(r rune, oneLine bool) bool {
	if r == '\n' || r == '\t' {
		return oneLine
	}
	return r < 0x20 || r >= 0x7f && r < 0xa0
}

// shellSafe are the bytes a shell word needs no quotes for.
const shellSafe = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./+-"

// ShellQuote is s as one POSIX shell word: bare when safe, else quoted.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, shellSafe) == "" {
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

// SignalName is a signal's short name (SIGTERM), else its description.
func SignalName(sig os.Signal) string {
	if s, ok := sig.(syscall.Signal); ok && signalNames[s] != "" {
		return signalNames[s]
	}
	return sig.String()
}

// Plural is "1 hook" or "2 hooks".
func Plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
