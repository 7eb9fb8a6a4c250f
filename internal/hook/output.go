package hook

// Output is the JSON object a hook prints on stdout with exit 0: only
// documented fields, since the client silently ignores any other.
type Output struct {
	Continue       *bool  `json:"continue,omitempty"`
	StopReason     string `json:"stopReason,omitempty"`
	SuppressOutput bool   `json:"suppressOutput,omitempty"`
	SystemMessage  string `json:"systemMessage,omitempty"`
	// Decision "block": a stop goes on with Reason to the model; a prompt
	// is dropped, Reason shown to the user.
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

// BlockPrefix starts every blocked stop's reason, which the session's
// record is searched for.
const BlockPrefix = "stopgate: you may not stop yet"

// Block refuses a stop (Stop, SubagentStop) or a prompt (UserPromptSubmit):
// the reason goes to the model, or for a prompt to the user.
func Block(reason string) Output { return Output{Decision: "block", Reason: reason} }

// Halt ends the whole session: the user sees reason, the model does not.
func Halt(reason string) Output {
	f := false
	return Output{Continue: &f, StopReason: reason}
}

// HaltSaid is Halt with reason as the systemMessage too: claude -p drops
// stopReason but stream-json prints a systemMessage, so a headless log
// shows why the session ended. Other clients get Halt.
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
	return Output{HookSpecificOutput: &Specific{HookEventName: event, PermissionDecision: "deny", PermissionDecisionReason: reason}}
}
