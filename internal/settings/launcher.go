package settings

import "strings"

// The launcher is the command line gate init registers: it runs the first
// candidate path that is executable, and when none is (a fresh clone, a
// machine that never installed stopgate) prints fallback, the client's
// halt or deny, instead of failing with exit 127, which every client
// treats as a non-blocking error and so as a pass. It is builtins and exec
// only: no process is forked on the way to the program.
//
//	for p in CANDIDATES; do [ -x "$p" ] && exec "$p" ARGS; done; printf '%s\n' 'FALLBACK'
//
// A candidate may be a glob (node_modules/@stopgate/*/bin/gate): one that
// matches nothing stays the pattern, which is not executable.

const (
	launchHead = "for p in "
	launchBody = `; do [ -x "$p" ] && exec "$p"`
	launchTail = "; done; "
)

// Launcher returns the command line that runs the first executable of
// candidates (shell words, quoted as needed) with args (shell text), or
// else prints fallback and exits 0; with no fallback it exits 0 silently.
func Launcher(candidates []string, args, fallback string) string {
	var b strings.Builder
	b.WriteString(launchHead)
	b.WriteString(strings.Join(candidates, " "))
	b.WriteString(launchBody)
	if args != "" {
		b.WriteString(" " + args)
	}
	b.WriteString(launchTail)
	if fallback == "" {
		b.WriteString("exit 0")
	} else {
		b.WriteString(`printf '%s\n' ` + singleQuoted(fallback))
	}
	return b.String()
}

// Candidates returns the candidate words of a launcher command line, as
// written (quoted); ok is false for any other command.
func Candidates(cmd string) (words []string, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimLeft(cmd, " \t"), launchHead)
	if !found {
		return nil, false
	}
	list, _, found := strings.Cut(rest, launchBody)
	if !found {
		return nil, false
	}
	for list != "" {
		w := shellWord(list)
		if w == "" {
			break
		}
		words = append(words, w)
		list = strings.TrimLeft(list[len(w):], " \t")
	}
	return words, len(words) > 0
}

// shellWord returns the first word of s as written, quotes included.
func shellWord(s string) string {
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '\\':
			i++
		case c == ' ' || c == '\t' || c == ';':
			return s[:i]
		}
	}
	return s
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

// singleQuoted is s as one single-quoted shell word.
func singleQuoted(s string) string {
	return ShellQuote(s)
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
	if _, ok := Candidates(cmd); ok {
		_, rest, _ := strings.Cut(cmd, launchBody)
		args, _, _ := strings.Cut(rest, launchTail)
		return strings.TrimSpace(args)
	}
	cmd = strings.TrimLeft(cmd, " \t")
	return strings.TrimSpace(cmd[len(shellWord(cmd)):])
}
