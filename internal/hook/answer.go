package hook

import (
	"encoding/json"
	"io"

	"github.com/stopgate/stopgate/internal/cli"
)

// Dialect is a client other than Claude Code, as the writer of the answers
// to its inputs sees it (package client).
type Dialect interface {
	// Name is the client's name as `gate init --client` takes it.
	Name() string
	// Encode turns an answer to the client's event into the value the
	// client reads on stdout; nil prints nothing (it has no way to take it).
	Encode(event string, o Output) any
	// Halt is a halt with reason as the client acts on it: Halt(reason)
	// where the client shows the user its reason, else a block that hands
	// the reason to the model to tell the user (HaltRelay). once reports a
	// relay the client needs a single time, for a stop whose halt was not
	// relayed yet (relayed false): the stop then counts it as a block.
	Halt(reason string, relayed bool) (o Output, once bool)
}

// Answer writes the answers to one hook input, in the shape its client
// reads. Decoding an input (client.Decode) gives it beside the input;
// every answer to the input goes through it.
type Answer struct {
	w      io.Writer
	client Dialect // nil: Claude Code, the reference
	event  string  // the event as the client names it
}

// AnswerTo returns the writer of the answers to in on w, in its client's
// shape (in.Client; Claude Code's when nil, or when in is).
func AnswerTo(w io.Writer, in *Input) Answer {
	if in == nil {
		return Answer{w: w}
	}
	return Answer{w: w, client: in.Client, event: in.ClientEvent}
}

// Write prints o as one line of JSON, as the client reads it; a halt is
// first what the client acts on (Halt). Its texts are made Visible first.
// It is the one writer of hook output, so no answer can leave in the wrong
// shape or carry raw escape sequences.
func (a Answer) Write(o Output) error {
	if o.Continue != nil && !*o.Continue {
		said := o.SystemMessage
		if o, _ = a.Halt(o.StopReason, true); a.client == nil {
			o.SystemMessage = said // HaltSaid: Claude Code prints it in print mode
		}
	}
	o.StopReason, o.SystemMessage, o.Reason = cli.Visible(o.StopReason, false), cli.Visible(o.SystemMessage, false), cli.Visible(o.Reason, false)
	if o.HookSpecificOutput != nil {
		spec := *o.HookSpecificOutput
		spec.AdditionalContext = cli.Visible(spec.AdditionalContext, false)
		spec.PermissionDecisionReason = cli.Visible(spec.PermissionDecisionReason, false)
		o.HookSpecificOutput = &spec
	}
	var v any = o
	if a.client != nil {
		if v = a.client.Encode(a.event, o); v == nil {
			return nil
		}
	}
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = a.w.Write(append(data, '\n'))
	return err
}

// Halt is a halt with reason as the client acts on it (Dialect.Halt):
// Claude Code shows its reason.
func (a Answer) Halt(reason string, relayed bool) (o Output, once bool) {
	if a.client == nil {
		return Halt(reason), false
	}
	return a.client.Halt(reason, relayed)
}

// HaltRelay is a halt's reason as a block hands it to the model, for a
// client that cannot show a halt to the user itself (Copilot CLI, Codex).
// It starts with RelayPrefix.
func HaltRelay(reason string) string {
	return RelayPrefix + ": stop working now, and tell the user, word for word: " + reason
}

// RelayPrefix starts every relayed halt (HaltRelay): a client's record of
// the session shows one was fed back by it.
const RelayPrefix = "stopgate halted this session, and this client does not show the user why"
