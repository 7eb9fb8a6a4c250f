// Package cli runs a stopgate command and maps its outcome to an exit code:
// 0 success (stdout is the hook's answer), 1 a non-blocking error the
// client logs, 2 a blocking one (CLI usage errors only). An error prints as "name: error" on stderr, then its hints.
package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/stopgate/stopgate/internal/buildinfo"
	"github.com/stopgate/stopgate/internal/trust/program"
)

// Env is what a command sees of its process.
type Env struct {
	Args           []string // arguments after the program name
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Getenv         func(string) string
	Dir            string // working directory
}

// ExitError asks for a specific exit code; its message, if any, is printed.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Exit returns an error that exits with code after printing nothing more.
func Exit(code int) error { return &ExitError{Code: code} }

// Hinted attaches hint lines, printed under the error.
type Hinted struct {
	Err   error
	Hints []string
}

func (h *Hinted) Error() string { return h.Err.Error() }
func (h *Hinted) Unwrap() error { return h.Err }

// WithHint wraps err with hint lines.
func WithHint(err error, hints ...string) error { return &Hinted{Err: err, Hints: hints} }

// Main runs run with the process's Env and exits with its code; a Go fatal
// error ends by SIGABRT, not exit 2 (which the launcher passes through).
func Main(name string, run func(*Env) error, usage func(io.Writer)) {
	debug.SetTraceback("crash")
	if outdated(os.Args[0], os.Getenv) {
		// Input unread, the plugin's script searches again: run here, since a launcher that execs has no next candidate.
		script := program.PluginScript(os.Getenv("CLAUDE_PLUGIN_ROOT"), filepath.Base(os.Args[0]))
		syscall.Exec(script, append([]string{script}, os.Args[1:]...), os.Environ())
		os.Exit(126) // the script did not start: the launcher's next candidate, or its fallback, answers
	}
	wd, _ := os.Getwd()
	os.Exit(Run(name, &Env{Args: os.Args[1:], Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Dir: wd}, run, usage))
}

// outdated reports whether self is the plugin's kept copy of go.mod's tool
// (CLAUDE_PLUGIN_ROOT/cache/CLAUDE_PROJECT_DIR/) and go.mod or go.sum changed since.
func outdated(self string, getenv func(string) string) bool {
	root, dir := getenv("CLAUDE_PLUGIN_ROOT"), getenv("CLAUDE_PROJECT_DIR")
	if root == "" || dir == "" || filepath.Dir(self) != filepath.Join(root, "cache", dir) {
		return false
	}
	kept, err := os.Stat(self)
	if err != nil {
		return false
	}
	for _, name := range []string{"go.mod", "go.sum"} {
		st, err := os.Stat(filepath.Join(dir, name))
		if name == "go.mod" && err != nil || err == nil && st.ModTime().After(kept.ModTime()) {
			return true
		}
	}
	return false
}

// Run is Main with a given Env.
func Run(name string, env *Env, run func(*Env) error, usage func(io.Writer)) int {
	first := ""
	if len(env.Args) > 0 {
		first = env.Args[0]
	}
	err := flag.ErrHelp // -h and --help
	switch first {
	case "--version", "-version":
		fmt.Fprintln(env.Stdout, Version(name))
		return 0
	case "-h", "-help", "--help":
	default:
		err = safely(env, run)
	}
	if errors.Is(err, flag.ErrHelp) {
		usage(env.Stdout)
		return 0
	}
	if err == nil {
		return 0
	}
	code := 1
	if ee, ok := errors.AsType[*ExitError](err); ok {
		code = ee.Code
		if ee.Err == nil {
			return code
		}
	}
	fmt.Fprintf(env.Stderr, "%s: %s\n", name, OneLine(err.Error()))
	if h, ok := errors.AsType[*Hinted](err); ok {
		for _, hint := range h.Hints {
			fmt.Fprintf(env.Stderr, "\t%s\n", hint)
		}
	}
	return code
}

// Version is the line --version prints.
func Version(name string) string { return name + " " + buildinfo.Read().String() }

// IsTerminal reports whether f, stdin or stdout, is a terminal (a person).
func IsTerminal(f any) bool {
	file, ok := f.(*os.File)
	if !ok {
		return false
	}
	st, err := file.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// safely runs run, a panic an error with its stack on stderr: Go's exit 2 would be a blocking error.
func safely(env *Env, run func(*Env) error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			env.Stderr.Write(debug.Stack())
			err = fmt.Errorf("internal error (a bug in stopgate): %v", p)
		}
	}()
	return run(env)
}

// Parse parses args with fl, flags allowed after arguments ("--" ends them).
func Parse(fl *flag.FlagSet, args []string) ([]string, error) {
	var rest []string
	for {
		if err := fl.Parse(args); err != nil {
			return nil, err
		}
		if fl.NArg() == 0 {
			return rest, nil
		}
		if n := len(args) - fl.NArg(); n > 0 && args[n-1] == "--" {
			return append(rest, fl.Args()...), nil
		}
		rest = append(rest, fl.Arg(0))
		args = fl.Args()[1:]
	}
}

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
// out (\x1b, \u009b), which could rewrite what the user sees; with oneLine, newline and tab too ("\n").
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
	s, _ := sig.(syscall.Signal) // 0, unnamed, when not one
	return cmp.Or(signalNames[s], sig.String())
}

// Plural is "1 hook" or "2 hooks".
func Plural(n int, one, many string) string {
	return fmt.Sprintf("%d %s", n, map[bool]string{true: one, false: many}[n == 1])
}

// Duration is d as a person reads a run time: 42µs, 3ms, 1.5s, 1m30s.
func Duration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}
