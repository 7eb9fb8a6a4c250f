package settings

import (
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
)

// The launcher is the command line gate init registers:
//
//	for p in CANDIDATES; do [ -x "$p" ] && [ -s "$p" ] || continue; "$p" ARGS; s=$?; [ $s -lt 126 ] && exit $s; [ $s -gt 127 ] && break; done; printf '%s\n' 'FALLBACK'
//
// The program runs as the shell's child, not by exec: one that cannot
// start (126, 127, a pass to every client) tries the next candidate, then
// the fallback (the client's halt or deny) answers; a signal (above 127)
// answers the fallback at once. -s skips an empty file. See
// docs/fail-closed.md.

const (
	launchHead   = "for p in "
	launchBody   = `; do [ -x "$p" ] && [ -s "$p" ] || continue; "$p"`
	launchStatus = "; s=$?; [ $s -lt 126 ] && exit $s; [ $s -gt 127 ] && break"
	launchTail   = "; done; "
)

// forms are the launchers gate init has written, newest first: the text
// around the arguments.
var forms = []struct{ body, tail string }{
	{launchBody, launchStatus + launchTail},
	{`; do [ -x "$p" ] && exec "$p"`, launchTail}, // exec: a program that cannot run fails open
}

// Launcher returns the command line that runs the first executable of
// candidates (shell words) with args (shell text), else prints fallback
// (none: exits 0). Where no candidate is there at all it runs missing,
// shell text that reads the hook input, when missing is not "".
func Launcher(candidates []string, args, fallback, missing string) string {
	if args != "" {
		args = " " + args
	}
	end := "exit 0"
	if fallback != "" {
		end = `printf '%s\n' ` + cli.ShellQuote(fallback)
	}
	if missing != "" {
		// -e: a candidate there but not runnable is not missing.
		end = "for p in " + strings.Join(candidates, " ") + `; do [ -e "$p" ] && s=1; done; [ -n "${s-}" ] && { ` + end + "; exit 0; }; " + missing
	}
	return launchHead + strings.Join(candidates, " ") + launchBody + args + launchStatus + launchTail + end
}

// parseLauncher splits a launcher into its candidate list and arguments,
// as written, and its index in forms: -1 for any other command.
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

// Earlier reports whether cmd is a launcher of an earlier form (exec: a
// program there that cannot run let the stop pass).
func Earlier(cmd string) bool {
	_, _, form := parseLauncher(cmd)
	return form > 0
}

// Candidates returns a launcher's candidate words, as written; ok is false
// for any other command.
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

// Paths returns the paths a registered command runs, unquoted, variables
// left: a launcher's candidates, or a plain command's first word.
func Paths(cmd string) []string {
	words, ok := Candidates(cmd)
	if !ok {
		return []string{FirstWord(cmd)}
	}
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = FirstWord(w)
	}
	return out
}

// Shown is a command line as gate init lists it: a launcher as the words
// it runs, the rest as they are.
func Shown(cmd string) string {
	words, ok := Candidates(cmd)
	if !ok {
		return cmd
	}
	args := Args(cmd)
	if args != "" {
		args = " " + args
	}
	return strings.Join(words, " or ") + args + " if installed"
}

// Args returns the arguments a registered command gives its program, as
// shell text.
func Args(cmd string) string {
	if _, args, form := parseLauncher(cmd); form >= 0 {
		return args
	}
	cmd = strings.TrimLeft(cmd, " \t")
	w, _ := word(cmd)
	return strings.TrimSpace(cmd[len(w):])
}
