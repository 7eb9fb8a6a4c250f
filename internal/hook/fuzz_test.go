package hook

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzParseInput: whatever arrives on stdin, Parse never panics; it either
// fails with one line that is not empty, or returns an input with an event
// and a session that survives a round trip through JSON. Seeds: the
// client's real event shapes and the bad-input catalogue, in
// testdata/fuzz/FuzzParseInput.
func FuzzParseInput(f *testing.F) {
	f.Add([]byte(`{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/p/src/prompts/joke.md"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, events := range [][]string{nil, {PostToolUse, UserPromptExpansion, UserPromptSubmit}, {Stop, SubagentStop}} {
			in, err := Parse(data, events...)
			if err != nil {
				if in != nil {
					t.Fatalf("both an input and an error: %v", err)
				}
				if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\r\n") {
					t.Fatalf("error is not one line: %q", msg)
				}
				continue
			}
			if in.HookEventName == "" || in.SessionID == "" {
				t.Fatalf("accepted without event or session: %+v", in)
			}
			if len(events) > 0 && !slices.Contains(events, in.HookEventName) {
				t.Fatalf("accepted event %q outside %v", in.HookEventName, events)
			}
			if !utf8.Valid(data) {
				t.Fatalf("accepted input that is not UTF-8")
			}
			again, err := json.Marshal(in)
			if err != nil {
				t.Fatalf("re-encoding: %v", err)
			}
			in2, err := Parse(again, events...)
			if err != nil {
				t.Fatalf("re-encoded input %s does not parse: %v", again, err)
			}
			if in2.SessionID != in.SessionID || in2.HookEventName != in.HookEventName || in2.Prompt != in.Prompt ||
				in2.AgentID != in.AgentID || in2.Tool.FilePath != in.Tool.FilePath || in2.CommandName != in.CommandName {
				t.Fatalf("round trip changed the input:\n%+v\n%+v", in, in2)
			}
		}
	})
}
