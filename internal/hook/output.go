package hook

// Output is the JSON object a hook may print on stdout with exit code 0.
// Only fields the client documents are here: the client silently ignores
// anything else (such as the legacy "replace"), so an unknown key would be a
// bug that no error ever reports.
type Output struct {
	Continue       *bool  `json:"continue,omitempty"`
	StopReason     string `json:"stopReason,omitempty"`
	SuppressOutput bool   `json:"suppressOutput,omitempty"`
	SystemMessage  string `json:"systemMessage,omitempty"`
	// Decision "block" on Stop/SubagentStop keeps the agent working and
	// hands it Reason; on UserPromptSubmit it drops the prompt and shows
	// Reason to the user.
	Decision           string    `json:"decision,omitempty"`
	Reason             string    `json:"reason,omitempty"`
	HookSpecificOutput *Specific `json:"hookSpecificOutput,omitempty"`
}

// Specific is hookSpecificOutput. HookEventName must equal the event.
type Specific struct {
	HookEventName            string `json:"hookEventName"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// BlockPrefix starts the reason of every stop the gate blocks: a client's
// record of the session is searched for it to count the blocks it fed back.
const BlockPrefix = "stopgate: you may not stop yet"

// Block refuses a stop (Stop, SubagentStop) or a prompt (UserPromptSubmit):
// the reason goes to the model, or for a prompt to the user.
func Block(reason string) Output { return Output{Decision: "block", Reason: reason} }

// Halt ends the whole session: the user sees reason, the model does not.
func Halt(reason string) Output {
	f := false
	return Output{Continue: &f, StopReason: reason}
}

// HaltSaid is Halt with reason also as the systemMessage, for a halt the
// gate decides at a stop: Claude Code's print mode (claude -p) drops
// stopReason from its output, but stream-json prints a systemMessage
// ({"type":"system","subtype":"informational","content":"Stop says: …"}),
// so a headless run's log shows why the session ended. Clients other than
// Claude Code get Halt.
func HaltSaid(reason string) Output {
	o := Halt(reason)
	o.SystemMessage = reason
	return o
}

// Context adds text to the model's context after event.
func Context(event, text string) Output {
	return Output{HookSpecificOutput: &Specific{HookEventName: event, AdditionalContext: text}}
}

// Deny refuses the call of a permission event (PreToolUse, PreSkillShellCommand),
// answered under that event's name, and tells the model why.
func Deny(event, reason string) Output {
	return Output{HookSpecificOutput: &Specific{
		HookEventName:            event,
		PermissionDecision:       "deny",
		PermissionDecisionReason: reason,
	}}
}
