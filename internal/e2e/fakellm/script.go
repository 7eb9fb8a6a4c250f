package fakellm

import "strings"

// Part is one piece of a reply: text, or a tool call.
type Part struct {
	Text string
	Call *Call
}

// Text is a text reply part.
func Text(s string) Part { return Part{Text: s} }

// Tool is a tool call reply part; the server gives it an id. Several in one reply are
// parallel tool calls.
func Tool(name string, args map[string]any) Part {
	return Part{Call: &Call{Name: name, Args: args}}
}

// Turn answers a request, or returns nil to leave it to the next Turn.
type Turn func(r *Request) []Part

// Script is a scenario: each request is answered by its first Turn with a reply.
// Turns see the whole conversation, so a Script keeps no state and a retried request
// gets the same answer.
type Script []Turn

// answer is the reply of the first Turn that has one, or nil.
func (s Script) answer(r *Request) []Part {
	for _, turn := range s {
		if reply := turn(r); reply != nil {
			return reply
		}
	}
	return nil
}

// Match is a condition on a request's conversation.
type Match func(r *Request) bool

// When answers reply to the requests m matches.
func When(m Match, reply ...Part) Turn {
	return func(r *Request) []Part {
		if m(r) {
			return reply
		}
		return nil
	}
}

// Always matches every request.
func Always(*Request) bool { return true }

// AtTurn matches a request of a thread that has had n model turns so far: 0 is the
// first request of the main thread or of a subagent.
func AtTurn(n int) Match {
	return func(r *Request) bool { return r.Turns() == n }
}

// LastHas matches a request in which the client told the model s since its last turn
// (see Request.Latest), e.g. a stop hook's block reason.
func LastHas(s string) Match {
	return func(r *Request) bool { return strings.Contains(r.Latest(), s) }
}

// ResultOf matches a request that answers the model's last turn with the result of a
// call of tool.
func ResultOf(tool string) Match {
	return func(r *Request) bool {
		names := map[string]string{}
		for _, m := range r.Messages {
			for _, c := range m.Calls {
				names[c.ID] = c.Name
			}
		}
		for _, m := range r.latest() {
			if m.Role == "tool" && names[m.CallID] == tool {
				return true
			}
		}
		return false
	}
}

// Subagent matches the requests of Claude Code subagent threads: the client marks them
// with cc_is_subagent=true in the billing header of the system prompt.
func Subagent(r *Request) bool { return strings.Contains(r.System, "cc_is_subagent=true") }

// All matches when every m matches.
func All(ms ...Match) Match {
	return func(r *Request) bool {
		for _, m := range ms {
			if !m(r) {
				return false
			}
		}
		return true
	}
}
