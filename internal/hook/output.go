package hook

import (
	"encoding/json"
	"io"

	"github.com/stopgate/stopgate/internal/cli"
)

// Output is the JSON object a hook prints on stdout with exit 0: documented fields only.
type Output struct {
	Continue           *bool     `json:"continue,omitempty"`
	StopReason         string    `json:"stopReason,omitempty"`
	SuppressOutput     bool      `json:"suppressOutput,omitempty"`
	SystemMessage      string    `json:"systemMessage,omitempty"`
	Decision           string    `json:"decision,omitempty"` // "block": a stop goes on with Reason to the model; a prompt is dropped
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

// BlockPrefix starts every blocked stop's reason (the record is searched for it).
const BlockPrefix = "stopgate: you may not stop yet"

// Block refuses a stop (the reason goes to the model) or a prompt (to the user).
func Block(reason string) Output { return Output{Decision: "block", Reason: reason} }

// Halt ends the whole session: the user sees reason, the model does not.
func Halt(reason string) Output {
	return Output{Continue: new(false), StopReason: reason}
}

// HaltSaid is Halt with reason as the systemMessage too, which a headless claude -p log shows (it drops stopReason).
func HaltSaid(reason string) Output {
	o := Halt(reason)
	o.SystemMessage = reason
	return o
}

// Context adds text to the model's context after event.
func Context(event, text string) Output {
	return Output{HookSpecificOutput: &Specific{HookEventName: event, AdditionalContext: text}}
}

// Deny refuses the call of a permission event and tells the model why.
func Deny(event, reason string) Output {
	return Output{HookSpecificOutput: &Specific{HookEventName: event, PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

// Dialect is a client other than Claude Code (package client): how it reads an answer.
type Dialect struct {
	Name   string                           // as gate init --client takes it
	Encode func(event string, o Output) any // the value the client reads on stdout (nil prints nothing); nil: o as is
	// Halt is a halt as the client acts on it: shown, or a block the model relays (HaltRelay); once: relayed a
	// single time, counted as a block. nil: Halt, which the client shows.
	Halt func(reason string, relayed bool) (o Output, once bool)
}

// Answer writes the answers to one hook input, in its client's shape.
type Answer struct {
	w      io.Writer
	client *Dialect // nil: Claude Code, the reference
	event  string   // the event as the client names it
}

// AnswerTo returns the writer of the answers to in (nil: Claude Code's) on w.
func AnswerTo(w io.Writer, in *Input) Answer {
	if in == nil {
		return Answer{w: w}
	}
	return Answer{w: w, client: in.Client, event: in.ClientEvent}
}

// Write prints o as one line of JSON in the client's shape, a halt as it acts on it, its texts Visible.
func (a Answer) Write(o Output) error {
	if o.Continue != nil && !*o.Continue {
		said := o.SystemMessage
		if o, _ = a.Halt(o.StopReason, true); a.client == nil {
			o.SystemMessage = said // HaltSaid: Claude Code prints it in print mode
		}
	}
	o.StopReason, o.SystemMessage, o.Reason = cli.Visible(o.StopReason, false), cli.Visible(o.SystemMessage, false), cli.Visible(o.Reason, false)
	if s := o.HookSpecificOutput; s != nil {
		o.HookSpecificOutput = &Specific{s.HookEventName, cli.Visible(s.AdditionalContext, false), s.PermissionDecision, cli.Visible(s.PermissionDecisionReason, false)}
	}
	var v any = o
	if a.client != nil && a.client.Encode != nil {
		if v = a.client.Encode(a.event, o); v == nil {
			return nil
		}
	}
	return json.NewEncoder(a.w).Encode(v) // one line, one write
}

// Halt is a halt with reason as the client acts on it (Dialect.Halt).
func (a Answer) Halt(reason string, relayed bool) (o Output, once bool) {
	if a.client == nil || a.client.Halt == nil {
		return Halt(reason), false
	}
	return a.client.Halt(reason, relayed)
}

// HaltRelay is a halt's reason as a block hands it to the model, for a client that cannot show it.
func HaltRelay(reason string) string {
	return RelayPrefix + ": stop working now, and tell the user, word for word: " + reason
}

// RelayPrefix starts every relayed halt, as the session's record shows it.
const RelayPrefix = "stopgate halted this session, and this client does not show the user why"
