package dialect

import "github.com/stopgate/stopgate/internal/hook"

// Hook is one hook gate init registers in a client's file: a program for
// an event.
type Hook struct {
	Event   string // as the client names it
	Matcher string // tool-name pattern for tool events, "" for the others
	Program string // one of hook.Programs
	Timeout int    // seconds
}

// Hooks returns every hook gate init registers for client and gate check
// expects, events in the client's own names (OpenCode's plugin: none).
//
// Timeouts are backstops for a wedged process, not budgets: detect answers
// in milliseconds; the gate enforces each validator's own timeout and runs
// them in parallel, so its hook timeout only needs to exceed the longest
// (`gate check` says when it does not); the gate is told it (--timeout).
func Hooks(client string) []Hook {
	out := make([]Hook, 0, len(hooks[client]))
	for _, h := range hooks[client] {
		h.Event = clientEvent(client, h.Event)
		out = append(out, h)
	}
	return out
}

// hooks are each client's registrations, one line each, in stopgate's
// event names.
var hooks = map[string][]Hook{
	Claude: {
		{hook.PostToolUse, "Read|Skill|Bash", hook.Detect, 10}, // a prompt read (Read, a shell command), or a command the model ran
		{hook.UserPromptExpansion, "", hook.Detect, 10},
		{hook.UserPromptSubmit, "", hook.Detect, 10},
		{hook.PreToolUse, "Write|Edit|MultiEdit|NotebookEdit|Bash", hook.Detect, 10}, // the tamper guard
		{hook.Stop, "", hook.Gate, 600},
		{hook.SubagentStop, "", hook.Gate, 600},
		{hook.ConfigChange, "", hook.Gate, 10},         // refuses a settings change that weakens stopgate
		{hook.UserPromptSubmit, "", hook.Testhook, 10}, // the test runner's words
		{hook.Stop, "", hook.Testhook, 600},            // the test runner's --auto mode
	},
	Codex: {
		{hook.PostToolUse, "Bash", hook.Detect, 10}, // reads are shell commands
		{hook.UserPromptSubmit, "", hook.Detect, 10},
		{hook.PreToolUse, "Bash|apply_patch", hook.Detect, 10},
		{hook.Stop, "", hook.Gate, 600},
		{hook.SubagentStop, "", hook.Gate, 600},
		{hook.UserPromptSubmit, "", hook.Testhook, 10},
		{hook.Stop, "", hook.Testhook, 600},
	},
	Gemini: {
		{hook.PostToolUse, "read_file|read_many_files|run_shell_command", hook.Detect, 10},
		{hook.UserPromptSubmit, "", hook.Detect, 10},
		{hook.PreToolUse, "write_file|replace|run_shell_command", hook.Detect, 10},
		{hook.Stop, "", hook.Gate, 600},
		{hook.UserPromptSubmit, "", hook.Testhook, 10},
		{hook.Stop, "", hook.Testhook, 600},
	},
	Copilot: {
		{hook.PostToolUse, "", hook.Detect, 10},
		{hook.UserPromptSubmit, "", hook.Detect, 10},
		{hook.PreToolUse, "", hook.Detect, 10},
		{hook.Stop, "", hook.Gate, 600},
		{hook.SubagentStop, "", hook.Gate, 600},
		{hook.UserPromptSubmit, "", hook.Testhook, 10},
		{hook.Stop, "", hook.Testhook, 600},
	},
}

// clientEvent is stopgate's event as client names it: Event reversed.
func clientEvent(client, event string) string {
	for name, e := range events[client] {
		if e == event {
			return name
		}
	}
	return event
}
