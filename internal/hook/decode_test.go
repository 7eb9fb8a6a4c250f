package hook

import (
	"strings"
	"testing"
)

// TestParseRejects pins the one-line message of every kind of bad input:
// each says what was found and what was expected.
func TestParseRejects(t *testing.T) {
	events := []string{PostToolUse, UserPromptSubmit}
	tests := []struct{ name, in, want string }{
		{"empty", "", "no hook input on stdin (expected one JSON object)"},
		{"blank", " \n\t\n", "no hook input on stdin (expected one JSON object)"},
		{"text", "hello", `hook input is not JSON (it starts with "h"), want one JSON object`},
		{"array", `[{"session_id":"s"}]`, "hook input is a JSON array, want one JSON object"},
		{"string", `"PostToolUse"`, "hook input is a JSON string, want one JSON object"},
		{"number", `42`, "hook input is a JSON number, want one JSON object"},
		{"boolean", `true`, "hook input is a JSON boolean, want one JSON object"},
		{"null", `null`, "hook input is JSON null, want one JSON object"},
		{"truncated", `{"session_id":"s1",`, "hook input is not valid JSON: unexpected end of JSON input"},
		{"two objects", `{"session_id":"s1"} {}`, "hook input is not valid JSON: invalid character '{' after top-level value"},
		{"invalid UTF-8", "{\"session_id\":\"s\xff1\"}", "hook input is not valid UTF-8 (bad byte at offset 16), want one JSON object in UTF-8"},
		{"invalid UTF-8 first", "\xfe{}", "hook input is not valid UTF-8 (bad byte at offset 0), want one JSON object in UTF-8"},
		{"session number", `{"session_id":1,"hook_event_name":"PostToolUse"}`, `hook input field "session_id" is a JSON number, want a string`},
		{"event array", `{"session_id":"s","hook_event_name":["Stop"]}`, `hook input field "hook_event_name" is a JSON array, want a string`},
		{"stop_hook_active string", `{"session_id":"s","hook_event_name":"Stop","stop_hook_active":"yes"}`, `hook input field "stop_hook_active" is a JSON string, want a boolean (true or false)`},
		{"prompt object", `{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":{}}`, `hook input field "prompt" is a JSON object, want a string`},
		{"file_path array", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":["a"]}}`, `hook input field "tool_input.file_path" is a JSON array, want a string`},
		{"tool_input string", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":"a.md"}`, `hook input field "tool_input" is a JSON string, want an object`},
		{"no event", `{"session_id":"s"}`, "hook input has no hook_event_name"},
		{"unknown event", `{"session_id":"s","hook_event_name":"Notification"}`, `unsupported hook event "Notification": this hook handles PostToolUse, UserPromptSubmit (check how it is registered in .claude/settings.json)`},
		{"no session", `{"hook_event_name":"PostToolUse"}`, "hook input has no session_id"},
		{"null session", `{"session_id":null,"hook_event_name":"PostToolUse"}`, "hook input has no session_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Parse([]byte(tt.in), events...)
			if err == nil {
				t.Fatalf("accepted: %+v", in)
			}
			if err.Error() != tt.want {
				t.Errorf("got  %s\nwant %s", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("message is not one line: %q", err)
			}
		})
	}
}

// TestParseAccepts: input that is odd but legitimate decodes. Unknown
// fields are the client's to add; a tool stopgate does not read may have
// any input (MCP tools); null is JSON's "absent".
func TestParseAccepts(t *testing.T) {
	tests := []struct{ name, in string }{
		{"unknown fields", `{"session_id":"s","hook_event_name":"PostToolUse","new_field":{"x":[1,2]},"permission_mode":"default"}`},
		{"other tool's odd input", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"mcp__x__y","tool_input":"just text"}`},
		{"null tool_input", `{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":null}`},
		{"escaped lone surrogate", `{"session_id":"s","hook_event_name":"UserPromptSubmit","prompt":"\ud800"}`},
		{"surrounding blanks", "\n  {\"session_id\":\"s\",\"hook_event_name\":\"UserPromptSubmit\"}\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Parse([]byte(tt.in), PostToolUse, UserPromptSubmit); err != nil {
				t.Errorf("rejected: %v", err)
			}
		})
	}
}
