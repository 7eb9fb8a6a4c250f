package dialect

import (
	"bytes"
	"io"
	"strings"

	"github.com/stopgate/stopgate/internal/hook"
)

// Answer returns o as client reads it on stdout for its event (the
// client's own name), one line of JSON without the newline; "" when the
// client has no way to take it. It serves answers written before any
// input is read: the fallback of gate init's launcher, printed when the
// program is not installed.
func Answer(client, event string, o hook.Output) string {
	var b bytes.Buffer
	if err := answerTo(&b, client, event).Write(o); err != nil {
		return "" // an Output always marshals
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// AnswerTo returns the writer of answers on w in the registered client's
// shape, for an answer before the input says whose it is (a panic while
// it is read): a Copilot stop is answered as Copilot acts on it.
func AnswerTo(w io.Writer, client string) hook.Answer { return answerTo(w, client, "") }

func answerTo(w io.Writer, client, event string) hook.Answer {
	return hook.AnswerTo(w, &hook.Input{ClientEvent: event, Client: map[string]hook.Dialect{
		Codex: codex{}, Gemini: gemini{}, Copilot: copilot{native: true}, OpenCode: opencode{},
	}[client]})
}

// Event returns stopgate's name (Claude Code's) for client's own event:
// "AfterAgent" of gemini and "agentStop" of copilot are both "Stop".
func Event(client, event string) string {
	if e, ok := events[client][event]; ok {
		return e
	}
	return event
}

// events are the clients' own event names that are not stopgate's.
var events = map[string]map[string]string{Gemini: geminiEvent, Copilot: copilotEvent}
