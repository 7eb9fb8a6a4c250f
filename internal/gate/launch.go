package gate

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
)

// launch returns the command line gate init registers on client's event:
// the launcher (settings.Launcher) of candidate, the program as a shell
// word, with args, for the project at root. A program that is there but
// cannot run is answered for: a stop halts and the tamper guard denies,
// each naming what is missing and the command that installs it. Where it
// is not installed at all (a teammate who has not run the install), only
// what matters is refused (missing): the other events pass silently.
func launch(c *client.Client, event, candidate, args string, in install, root, shown string) string {
	text := missingText(in, shown)
	return settings.Launcher([]string{candidate}, args, missingAnswer(c, event, text), missing(c, event, in, root, text))
}

// missingText is what a machine without the programs is told.
func missingText(in install, shown string) string {
	return fmt.Sprintf("stopgate is not installed on this machine: %s is missing or cannot run, so nothing this session did was checked. Install it with: %s (then run the session again)",
		shown, in.command)
}

// missingAnswer is the launcher's fallback for client's event: its halt at
// a stop, as the client acts on it (hook.Answer.Halt: Copilot, which shows
// no halt, gets the block that relays it), its deny at the tamper guard,
// "" elsewhere.
func missingAnswer(c *client.Client, event, text string) string {
	switch c.Event(event) {
	case hook.Stop, hook.SubagentStop:
		return c.Answer(event, hook.Halt(text))
	case hook.PreToolUse, hook.PreSkillShellCommand:
		return c.Answer(event, hook.Deny(c.Event(event), text))
	}
	return ""
}

// platform stands for the machine's npm platform (linux-x64, darwin-arm64)
// in a missing program's path: the launcher puts in uname's answer.
const platform = "@PLATFORM@"

// missing is what the launcher runs, in sh, where the program is not
// there at all: it cannot judge, so it refuses only what it can tell
// cheaply matters, and lets everything else through (exit 0, silent).
//
// At a stop it halts (the text names the install command and, on the npm
// route, the platform uname reports) when the session shows a mapped
// prompt in play: the transcript the hook input names mentions one of the
// names of a prompt key in mappings.toml (a file K.md, the dashed D.md,
// K/SKILL.md, the command /K or /a:b:c, the quoted key, as the Skill tool
// gives it), or it cannot be read. What it cannot tell: a prompt named
// otherwise (read by a relative path from its folder, through a variable
// or a glob), keys written as TOML literal strings (those halt every
// stop), a mappings.toml outside the project root (no halt). A mention
// that is not a read (the name in a message) halts too: that fails closed.
//
// At the tamper guard it refuses a tool call whose input names one of the
// protected files (protectedNames) by its text; a call that reaches one
// by a glob, a variable or a script is not caught: the OS wall, where it
// is up, still is.
func missing(c *client.Client, event string, in install, root, text string) string {
	switch c.Event(event) {
	case hook.Stop, hook.SubagentStop:
		dir, _ := varBin(c.ProjectVar, root, ".")
		return promptInPlay(dir+"/"+project.ConfigName) + " || exit 0; " + printAnswer(c.Answer(event, hook.Halt(text)))
	case hook.PreToolUse, hook.PreSkillShellCommand:
		// One -e a name, not the names a line each: a newline in a hook's
		// command makes Claude Code's debug log quote the line whole.
		var grep strings.Builder
		grep.WriteString("grep -qF")
		for _, name := range protectedNames(root, in) {
			grep.WriteString(" -e " + cli.ShellQuote(name))
		}
		return grep.String() + " || exit 0; " + printAnswer(c.Answer(event, hook.Deny(c.Event(event), text)))
	}
	return ""
}

// promptInPlay is sh that succeeds when the session shows a prompt of the
// mappings file config (shell text) in play, or cannot tell: see missing.
// It reads the hook input on stdin. Claude Code lists every skill by
// name ("joke") in each session's record (a skill_listing attachment),
// which no prompt's use is: those lines are left out.
func promptInPlay(config string) string {
	const keys = `awk '/^[ \t]*#/ { next } { while (match($0, /prompt[ \t]*=[ \t]*"[^"]*"/)) { k = substr($0, RSTART, RLENGTH); $0 = substr($0, RSTART + RLENGTH); sub(/^[^"]*"/, "", k); sub(/"$/, "", k); d = k; gsub("/", "-", d); c = k; gsub("/", ":", c); n = k; sub(/.*:/, "", n); print k ".md"; print d ".md"; print k "/SKILL.md"; print "/" c; print "/" d; print "/" n; print "\"" n "\"" } } /prompt[ \t]*=[ \t]*\047/ { print "/" }' `
	return `t=$(sed -n 's/.*"transcript_\{0,1\}[pP]ath" *: *"\([^"]*\)".*/\1/p' | head -n 1); k=$(` + keys + config + ` 2>/dev/null); [ -n "$k" ] && { [ ! -r "$t" ] || grep -v '"skill_listing"' "$t" | grep -qF "$k"; }`
}

// printAnswer is sh that prints answer, the platform put in.
func printAnswer(answer string) string {
	before, after, found := strings.Cut(answer, platform)
	if !found {
		return `printf '%s\n' ` + cli.ShellQuote(answer)
	}
	return `printf '%s%s%s\n' ` + cli.ShellQuote(before) + ` "$(uname -s | tr '[:upper:]' '[:lower:]')-$(uname -m | sed 's/x86_64/x64/; s/aarch64/arm64/')" ` + cli.ShellQuote(after)
}

// protectedNames are the texts the launcher's guard refuses in a tool
// call's input where the programs are missing: mappings.toml, every
// client's hook file, the state dir, the npm packages and the detect and
// gate programs,
// as paths from the project root at root.
func protectedNames(root string, in install) []string {
	out := []string{project.ConfigName, guard.NpmScope}
	out = append(out, guard.ClientFiles()...)
	if line := ignoreLine(root); line != "" {
		out = append(out, strings.Trim(line, "/"))
	}
	if rel, ok := project.Rel(root, in.path); ok && rel != "." && in.path != "" {
		// Not testhook's: gate init --no-testhook registers nothing of it.
		for _, p := range []string{hook.Detect, hook.Gate} {
			out = append(out, filepath.ToSlash(filepath.Join(rel, p)))
		}
	}
	return out
}
