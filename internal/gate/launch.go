package gate

import (
	"fmt"

	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
)

// launch returns the command line gate init registers on client's event:
// the launcher (settings.Launcher) of candidate, the program as a shell
// word, with args. Where the program is not installed it answers for it:
// a stop halts and the tamper guard denies, each naming what is missing
// and the command that installs it; any other event passes silently, as
// the stop that follows halts.
func launch(c *client.Client, event, candidate, args string, in install, shown string) string {
	return settings.Launcher([]string{candidate}, args, missingAnswer(c, event, missingText(in, shown)))
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
	case hook.PreToolUse:
		return c.Answer(event, hook.Deny(text))
	}
	return ""
}
