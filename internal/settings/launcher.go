package settings

import (
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
)

// The launcher is the command line gate init registers: it runs the first
// candidate path that is executable and not empty, and when none is (a
// fresh clone, a machine that never installed stopgate) or none can run,
// prints fallback, the client's halt or deny, instead of failing with exit
// 126 or 127, which every client treats as a non-blocking error and so as
// a pass:
//
//	for p in CANDIDATES; do [ -x "$p" ] && [ -s "$p" ] || continue; "$p" ARGS; s=$?; [ $s -lt 126 ] && exit $s; [ $s -gt 127 ] && break; done; printf '%s\n' 'FALLBACK'
//
// The program runs as the shell's child, not by exec, so that the shell
// outlives a program that cannot run and answers for it: one that is
// executable by its mode but that the kernel refuses (built for another
// platform, a noexec mount, a #! line naming a missing interpreter, a
// truncated binary) ends in 126 or 127, and exec would have left that
// status as the hook's answer. Builtins and one fork only; -s skips an
// empty file, which sh would run as an empty script, exit 0.
//
// What the program answers is the hook's answer: its stdout, stderr and
// any status below 126 (0, 1 and 2 included) pass through unchanged, and
// the hook input on stdin reaches it untouched, since a candidate that
// fails to start read none of it, so the next candidate gets it whole.
//
// A status above 127 is a program killed by a signal (SIGSEGV before
// main when the client's memory is limited, the OOM killer, SIGKILL):
// the launcher then prints fallback and tries no further candidate. The
// program may have read the input already, so a later candidate would
// judge a truncated one; and the status alone is a pass. A program killed
// before it answered printed nothing, so the fallback is the whole answer;
// one killed after it answered (stopgate's programs exit as soon as they
// have written, so only a kill in that instant) leaves two answers, which
// a client may not parse: no worse than the status alone. With no
// fallback (events whose stop halts later) the launcher exits 0 silently
// wherever it would have printed one.
//
// Running the program as a child costs one thing beside the fork: a
// signal sent to the shell alone, not to its process group, does not
// reach the program. Claude Code signals the child too at a hook's
// timeout (seen: SIGTERM reached a program run through this launcher),
// and the gate answers before that timeout anyway (package stop,
// deadline.go).
//
// A candidate may be a glob (node_modules/@stopgate/*/bin/gate): one that
// matches nothing stays the pattern, which is not executable.
//
// Launchers written by earlier versions ran the program with exec; their
// text still parses (forms), so gate check, gate uninstall and the tamper
// guard know them in users' settings files.

const (
	launchHead   = "for p in "
	launchBody   = `; do [ -x "$p" ] && [ -s "$p" ] || continue; "$p"`
	launchStatus = "; s=$?; [ $s -lt 126 ] && exit $s; [ $s -gt 127 ] && break"
	launchTail   = "; done; "
)

// forms are the launchers gate init has written, newest first: the text
// between the candidates and the arguments, and what follows the
// arguments up to the fallback.
var forms = []struct{ body, tail string }{
	{launchBody, launchStatus + launchTail},
	{`; do [ -x "$p" ] && exec "$p"`, launchTail}, // exec: a program that cannot run fails open
}

// Launcher returns the command line that runs the first executable of
// candidates (shell words, quoted as needed) with args (shell text), or
// else prints fallback and exits 0; with no fallback it exits 0 silently.
// Where no candidate is there at all (not installed, rather than there
// and unable to run) it runs missing instead, shell text that reads the
// hook input on stdin, when missing is not "".
func Launcher(candidates []string, args, fallback, missing string) string {
	if args != "" {
		args = " " + args
	}
	end := "exit 0"
	if fallback != "" {
		end = `printf '%s\n' ` + cli.ShellQuote(fallback)
	}
	if missing != "" {
		// s is set once a candidate ran; -e: one there but not executable
		// or empty is there.
		end = "for p in " + strings.Join(candidates, " ") + `; do [ -e "$p" ] && s=1; done; [ -n "${s-}" ] && { ` + end + "; exit 0; }; " + missing
	}
	return launchHead + strings.Join(candidates, " ") + launchBody + args + launchStatus + launchTail + end
}

// parseLauncher splits a launcher command line into its candidate list
// and its arguments, as written, and says which of forms it is: -1 for
// any other command.
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

// Earlier reports whether cmd is a launcher of an earlier form, which ran
// its program with exec: a program there that cannot run let the stop
// pass.
func Earlier(cmd string) bool {
	_, _, form := parseLauncher(cmd)
	return form > 0
}

// Candidates returns the candidate words of a launcher command line, as
// written (quoted); ok is false for any other command.
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
// left as they are: a launcher's candidates, or a plain command's first
// word.
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
// shell text: a launcher's, or what follows a plain command's first word.
func Args(cmd string) string {
	if _, args, form := parseLauncher(cmd); form >= 0 {
		return args
	}
	cmd = strings.TrimLeft(cmd, " \t")
	w, _ := word(cmd)
	return strings.TrimSpace(cmd[len(w):])
}
