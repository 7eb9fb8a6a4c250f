package fakeapi

import (
	"strings"
)

// A Turn answers one model request with content blocks, or returns nil to pass the
// request to the next Turn of the Script.
type Turn func(r *Request) []Block

// A Script is a scenario: each model request is answered by the first Turn that returns
// blocks. Turns see the whole conversation, so a Script keeps no state and a retried
// request gets the same answer. A request no Turn answers fails the test.
type Script []Turn

// answer returns the reply of the first Turn that has one.
func (s Script) answer(r *Request) ([]Block, bool) {
	for _, turn := range s {
		if reply := turn(r); reply != nil {
			return reply, true
		}
	}
	return nil, false
}

// A Match is a condition on a request's conversation.
type Match func(r *Request) bool

// When returns a Turn that answers reply to the requests m matches.
func When(m Match, reply ...Block) Turn {
	return func(r *Request) []Block {
		if m(r) {
			return reply
		}
		return nil
	}
}

// Text returns a text block.
func Text(s string) Block { return Block{Type: "text", Text: s} }

// ToolUse returns a tool_use block calling tool with input; the server gives it an id.
// Several in one reply are parallel tool calls.
func ToolUse(tool string, input map[string]any) Block {
	if input == nil {
		input = map[string]any{}
	}
	return Block{Type: "tool_use", Name: tool, Input: input}
}

// Always matches every request.
func Always(*Request) bool { return true }

// AtTurn matches a request of a thread that has had n model turns so far: 0 is the
// first request of the main thread or of a subagent.
func AtTurn(n int) Match {
	return func(r *Request) bool { return r.Assistants() == n }
}

// Has matches a request any of whose messages contains s.
func Has(s string) Match {
	return func(r *Request) bool { return r.Contains(s) }
}

// LastHas matches a request in which the client told the model s since its last turn
// (see Request.Latest), e.g. a Stop hook's block reason.
func LastHas(s string) Match {
	return func(r *Request) bool {
		for _, m := range r.Latest() {
			if m.Contains(s) {
				return true
			}
		}
		return false
	}
}

// Task matches a request whose first user message contains s: the prompt of the
// main thread, or the task the Agent tool gave a subagent.
func Task(s string) Match {
	return func(r *Request) bool { return strings.Contains(r.FirstUser(), s) }
}

// ResultOf matches a request that answers the model's last turn with a tool_result for
// a call of tool; an empty tool matches any.
func ResultOf(tool string) Match {
	return func(r *Request) bool {
		names := map[string]string{}
		for _, u := range r.ToolUses() {
			names[u.ID] = u.Name
		}
		for _, m := range r.Latest() {
			for _, b := range m.Content {
				if b.Type == "tool_result" && (tool == "" || names[b.ToolUseID] == tool) {
					return true
				}
			}
		}
		return false
	}
}

// Subagent matches the requests of subagent threads.
func Subagent(r *Request) bool { return r.Subagent() }

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

// Not matches when m does not.
func Not(m Match) Match {
	return func(r *Request) bool { return !m(r) }
}
