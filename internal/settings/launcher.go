package settings

import (
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
)

// The launcher is the command line gate init registers: it runs the first runnable candidate as the shell's child;
// 126, 127 try the next, a signal breaks out, and the fallback (the client's halt) answers (docs/fail-closed.md).
// Exec's form saves the shell's fork: a candidate that cannot start ends the hook in silence, exit 0, by the EXIT
// trap in dash (no next candidate) and by execfail in bash (the next); a status of the program's is the hook's.
const (
	launchHead   = "for p in "
	launchBody   = `; do [ -x "$p" ] && [ -s "$p" ] || continue; "$p"`
	launchStatus = "; s=$?; [ $s -lt 126 ] && exit $s; [ $s -gt 127 ] && break"
	launchExec   = `; do [ -x "$p" ] && [ -s "$p" ] || continue; ${BASH_VERSION+shopt -s execfail}; trap 'exit 0' EXIT; exec "$p"`
	launchTail   = "; done; "
)

// forms are the launchers gate init has written, newest first: the text around the arguments, and whether gate
// check flags it (exec without the trap: a program that could not run passed the stop).
var forms = []struct {
	body, tail string
	earlier    bool
}{
	{launchBody, launchStatus + launchTail, false},
	{launchExec, launchTail, false},
	{`; do [ -x "$p" ] && exec "$p"`, launchTail, true},
}

// Launcher returns the command line running the first executable of candidates (shell words) with args, else printing
// fallback (none: exit 0); with none there at all, it runs missing if set.
func Launcher(candidates []string, args, fallback, missing string) string {
	end := "exit 0"
	if fallback != "" {
		end = `printf '%s\n' ` + cli.ShellQuote(fallback)
	}
	if missing != "" {
		// -e: a candidate there but not runnable is not missing.
		end = "for p in " + strings.Join(candidates, " ") + `; do [ -e "$p" ] && s=1; done; [ -n "${s-}" ] && { ` + end + "; exit 0; }; " + missing
	}
	return launcher(candidates, launchBody, args, launchStatus+launchTail+end)
}

// Exec returns the launcher in exec's form: the first executable of candidates runs in the shell's place with args.
func Exec(candidates []string, args string) string {
	return launcher(candidates, launchExec, args, launchTail+"exit 0")
}

// launcher joins a launcher's parts as forms lists them: the candidates, a form's body, the arguments, and its tail.
func launcher(candidates []string, body, args, tail string) string {
	if args != "" {
		args = " " + args
	}
	return launchHead + strings.Join(candidates, " ") + body + args + tail
}

// parseLauncher splits a launcher into its candidate list and arguments and its form; -1: none.
func parseLauncher(cmd string) (list, args string, form int) {
	rest, found := strings.CutPrefix(strings.TrimLeft(cmd, " \t"), launchHead)
	if !found {
		return "", "", -1
	}
	for i, f := range forms {
		list, after, found := strings.Cut(rest, f.body)
		if !found {
			continue
		}
		if args, _, found := strings.Cut(after, f.tail); found {
			return list, strings.TrimSpace(args), i
		}
	}
	return "", "", -1
}

// Earlier reports whether cmd is an earlier launcher (exec: a program that cannot run passed the stop).
func Earlier(cmd string) bool {
	_, _, form := parseLauncher(cmd)
	return form >= 0 && forms[form].earlier
}

// Candidates returns a launcher's candidate words, as written; ok is false for any other command.
func Candidates(cmd string) (words []string, ok bool) {
	list, _, form := parseLauncher(cmd)
	if form < 0 {
		return nil, false
	}
	for list != "" {
		w, _ := word(list)
		if w == "" {
			break
		}
		words = append(words, w)
		list = strings.TrimLeft(list[len(w):], " \t")
	}
	return words, len(words) > 0
}

// Paths returns the paths a command runs, unquoted, variables left: a launcher's candidates, or its first word.
func Paths(cmd string) []string {
	words, ok := Candidates(cmd)
	if !ok {
		words = []string{cmd}
	}
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = FirstWord(w)
	}
	return out
}

// Shown is a command line as gate init lists it: a launcher as the words it runs.
func Shown(cmd string) string {
	words, ok := Candidates(cmd)
	if !ok {
		return cmd
	}
	return strings.Join(words, " or ") + strings.TrimSuffix(" "+Args(cmd), " ") + " if installed"
}

// Args returns the arguments a registered command gives its program, as shell text.
func Args(cmd string) string {
	if _, args, form := parseLauncher(cmd); form >= 0 {
		return args
	}
	cmd = strings.TrimLeft(cmd, " \t")
	w, _ := word(cmd)
	return strings.TrimSpace(cmd[len(w):])
}
