package schema

import (
	"encoding/json"
	"errors"
	"io/fs"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The SDK release the schemas are written from. Bump it together with every
// schema file's $comment when re-deriving them from a newer sdk.d.ts.
const (
	sdkPackage = "@anthropic-ai/claude-agent-sdk"
	sdkVersion = "0.3.332"
)

var allEvents = []string{"ConfigChange", "PostToolUse", "PreSkillShellCommand", "PreToolUse", "Stop", "SubagentStop", "UserPromptExpansion", "UserPromptSubmit"}

func TestEvents(t *testing.T) {
	if got := Events(); !slices.Equal(got, allEvents) {
		t.Fatalf("Events() = %q, want %q", got, allEvents)
	}
	for _, ev := range allEvents {
		if _, ok := inputs[ev]; !ok {
			t.Errorf("%s has an output schema but no input schema", ev)
		}
	}
	if len(inputs) != len(outputs) {
		t.Errorf("%d input schemas, %d output schemas", len(inputs), len(outputs))
	}
}

func TestValidOutputs(t *testing.T) {
	tests := []struct {
		event, out string
	}{
		// No output at all: the client proceeds as if the hook had no opinion.
		{"Stop", ``},
		{"Stop", " \n\t"},
		{"PreToolUse", ``},
		{"PostToolUse", "\n"},
		{"UserPromptSubmit", ``},
		{"UserPromptExpansion", ``},
		{"SubagentStop", ``},
		{"Stop", `{}`},

		// The remediation loop: the agent may not stop and gets the reason.
		{"Stop", `{"decision":"block","reason":"3 findings left: run the fixer"}`},
		{"SubagentStop", `{"decision":"block","reason":"fix it first"}`},
		{"UserPromptSubmit", `{"decision":"block","reason":"prompt refused"}`},
		{"UserPromptExpansion", `{"decision":"block","reason":"command refused","hookSpecificOutput":{"hookEventName":"UserPromptExpansion","suppressOriginalPrompt":true}}`},
		{"Stop", `{"decision":"approve"}`},

		// Halting the whole session.
		{"Stop", `{"continue":false,"stopReason":"stopgate: queue is corrupt"}`},
		{"SubagentStop", `{"continue":false,"stopReason":"halt"}`},
		{"PostToolUse", `{"continue":false,"stopReason":"halt","suppressOutput":true,"systemMessage":"see log"}`},
		{"PreToolUse", `{"continue":false,"stopReason":"halt"}`},
		{"UserPromptSubmit", `{"continue":false,"stopReason":"halt"}`},

		// Context for the model.
		{"PostToolUse", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"this file has 2 findings"}}`},
		{"UserPromptSubmit", `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"remember the findings"}}`},
		{"UserPromptExpansion", `{"hookSpecificOutput":{"hookEventName":"UserPromptExpansion","additionalContext":"expanded"}}`},
		{"Stop", `{"hookSpecificOutput":{"hookEventName":"Stop","additionalContext":"note"}}`},
		{"SubagentStop", `{"hookSpecificOutput":{"hookEventName":"SubagentStop","additionalContext":"note"}}`},

		// Permission decisions.
		{"PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"blocked by stopgate"}}`},
		{"PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}`},
		{"PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"ask","permissionDecisionReason":"check","updatedInput":{"file_path":"/x"},"additionalContext":"c"}}`},
		{"PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"defer"}}`},

		// Surrounding whitespace, as printed by fmt.Println.
		{"Stop", "  {\"decision\":\"block\",\"reason\":\"r\"}\n"},
	}
	for _, tt := range tests {
		if err := ValidateOutput(tt.event, []byte(tt.out)); err != nil {
			t.Errorf("ValidateOutput(%q, %q) = %v, want nil", tt.event, tt.out, err)
		}
	}
}

// TestLegacyShapesRejected guards against the output shapes of older stopgate
// designs and of hand-written hooks that the real client silently ignores or
// misreads: each of them would have made a hook do nothing, with no error.
func TestLegacyShapesRejected(t *testing.T) {
	tests := []struct {
		name, event, out string
		pointer          string // want Error.Pointer; "-" for a non-*Error error
	}{
		{"replace key", "UserPromptSubmit", `{"replace":"new prompt"}`, "/replace"},
		{"replace key on PostToolUse", "PostToolUse", `{"replace":"x"}`, "/replace"},
		{"type/content message", "PostToolUse", `{"type":"context","content":"x"}`, "/content"},
		{"type/content message on Stop", "Stop", `{"type":"block","content":"x"}`, "/content"},
		{"PreToolCall event", "PreToolCall", `{}`, "-"},
		{"PostToolCall event", "PostToolCall", `{}`, "-"},
		{"PreToolCall event, empty output", "PreToolCall", ``, "-"},
		{"event name case", "stop", `{}`, "-"},
		{"hookEventName mismatch", "PostToolUse", `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"x"}}`, "/hookSpecificOutput/hookEventName"},
		{"hookEventName legacy", "PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolCall","permissionDecision":"deny"}}`, "/hookSpecificOutput/hookEventName"},
		{"hookEventName missing", "PostToolUse", `{"hookSpecificOutput":{"additionalContext":"x"}}`, "/hookSpecificOutput/hookEventName"},
		{"field of another event", "PostToolUse", `{"hookSpecificOutput":{"hookEventName":"PostToolUse","permissionDecision":"deny"}}`, "/hookSpecificOutput/permissionDecision"},
		{"Stop decision deny", "Stop", `{"decision":"deny","reason":"x"}`, "/decision"},
		{"SubagentStop decision deny", "SubagentStop", `{"decision":"deny","reason":"x"}`, "/decision"},
		{"continue as string", "Stop", `{"continue":"false","stopReason":"x"}`, "/continue"},
		{"permissionDecision block", "PreToolUse", `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"block"}}`, "/hookSpecificOutput/permissionDecision"},
		{"permissionDecision at top level", "PreToolUse", `{"permissionDecision":"deny"}`, "/permissionDecision"},
		{"reason as number", "Stop", `{"decision":"block","reason":3}`, "/reason"},
		{"async", "Stop", `{"async":true}`, "/async"},
		{"not an object", "Stop", `"block"`, ""},
		{"array", "Stop", `[{"decision":"block"}]`, ""},
		{"two objects", "Stop", `{}{}`, ""},
		{"plain text", "Stop", `blocked`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateOutput(tt.event, []byte(tt.out))
			if err == nil {
				t.Fatalf("ValidateOutput(%q, %q) = nil, want an error", tt.event, tt.out)
			}
			msg := err.Error()
			if msg != strings.ToLower(msg[:1])+msg[1:] {
				t.Errorf("error %q does not start lowercase", msg)
			}
			if !strings.Contains(msg, tt.event) {
				t.Errorf("error %q does not name the event %q", msg, tt.event)
			}
			var e *Error
			if tt.pointer == "-" {
				if errors.As(err, &e) {
					t.Errorf("got *Error %v, want an unknown-event error", err)
				}
				return
			}
			if !errors.As(err, &e) {
				t.Fatalf("error %v is not an *Error", err)
			}
			if e.Pointer != tt.pointer {
				t.Errorf("Pointer = %q, want %q (error: %v)", e.Pointer, tt.pointer, err)
			}
			if e.Unwrap() == nil {
				t.Errorf("error %v wraps nothing", err)
			}
			if !strings.Contains(msg, `"`+tt.pointer+`"`) {
				t.Errorf("error %q does not name the pointer %q", msg, tt.pointer)
			}
		})
	}
}

func TestValidInputs(t *testing.T) {
	base := `"session_id":"s","transcript_path":"/t.jsonl","cwd":"/p","permission_mode":"default","prompt_id":"u"`
	tests := []struct {
		event, in string
	}{
		{"PostToolUse", `{` + base + `,"hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/p/a.go"},"tool_response":{"file":{"filePath":"/p/a.go","content":"x"}},"tool_use_id":"t1","duration_ms":3,"new_field":1}`},
		{"PreToolUse", `{` + base + `,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/a.go"},"tool_use_id":"t1"}`},
		{"UserPromptSubmit", `{` + base + `,"hook_event_name":"UserPromptSubmit","prompt":"/joke extra-args"}`},
		{"UserPromptExpansion", `{` + base + `,"hook_event_name":"UserPromptExpansion","expansion_type":"slash_command","command_name":"joke","command_args":"","command_source":"projectSettings","prompt":"/joke"}`},
		{"Stop", `{` + base + `,"hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"done"}`},
		{"SubagentStop", `{` + base + `,"hook_event_name":"SubagentStop","stop_hook_active":true,"agent_id":"a1","agent_type":"general-purpose","agent_transcript_path":"/t/subagents/agent-a1.jsonl"}`},
	}
	for _, tt := range tests {
		if err := ValidateInput(tt.event, []byte(tt.in)); err != nil {
			t.Errorf("ValidateInput(%q, %s) = %v, want nil", tt.event, tt.in, err)
		}
	}
}

func TestInvalidInputs(t *testing.T) {
	tests := []struct {
		event, in, pointer string
	}{
		{"Stop", ``, ""},
		{"Stop", `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"Stop"}`, "/stop_hook_active"},
		{"Stop", `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"Stop","stop_hook_active":"true"}`, "/stop_hook_active"},
		{"Stop", `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"SubagentStop","stop_hook_active":true}`, "/hook_event_name"},
		{"SubagentStop", `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"SubagentStop","stop_hook_active":true,"agent_type":"x","agent_transcript_path":"/a"}`, "/agent_id"},
		{"PostToolUse", `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":"x","tool_response":{},"tool_use_id":"t"}`, "/tool_input"},
		{"UserPromptExpansion", `{"session_id":"s","transcript_path":"/t","cwd":"/p","hook_event_name":"UserPromptExpansion","expansion_type":"macro","command_name":"j","command_args":"","prompt":"/j"}`, "/expansion_type"},
	}
	for _, tt := range tests {
		err := ValidateInput(tt.event, []byte(tt.in))
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("ValidateInput(%q, %s) = %v, want an *Error", tt.event, tt.in, err)
			continue
		}
		if e.Pointer != tt.pointer || e.What != "input" {
			t.Errorf("ValidateInput(%q, %s): Pointer %q, What %q, want %q, input (error: %v)", tt.event, tt.in, e.Pointer, e.What, tt.pointer, err)
		}
	}
	if err := ValidateInput("PostToolCall", []byte(`{}`)); err == nil {
		t.Errorf("ValidateInput(PostToolCall) = nil, want an error")
	}
}

func TestErrorListsEveryFailure(t *testing.T) {
	err := ValidateOutput("Stop", []byte(`{"replace":"x","continue":"no"}`))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`"/continue"`, `"/replace"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %s", err, want)
		}
	}
}

var sourceRE = regexp.MustCompile(regexp.QuoteMeta(sdkPackage) + `@(\d+\.\d+\.\d+) \(claudeCodeVersion (\d+\.\d+\.\d+)\), file sdk\.d\.ts, types ([A-Za-z, ]+)\.`)

// TestSchemasDeclareSource checks that every schema names the SDK release and
// the types it was written from, so that a later update can be re-derived and
// reviewed against the same file.
func TestSchemasDeclareSource(t *testing.T) {
	names, err := fs.Glob(files, "*.json")
	if err != nil || len(names) == 0 {
		t.Fatalf("no schema files: %v", err)
	}
	for _, name := range names {
		doc := readSchema(t, name)
		comment, _ := doc["$comment"].(string)
		m := sourceRE.FindStringSubmatch(comment)
		if m == nil {
			t.Errorf("%s: $comment %q does not name %s@VERSION, sdk.d.ts and the types", name, comment, sdkPackage)
			continue
		}
		if m[1] != sdkVersion {
			t.Errorf("%s: written from %s@%s, the other schemas from %s", name, sdkPackage, m[1], sdkVersion)
		}
		event := strings.SplitN(name, ".", 2)[0]
		wantType := event + "HookSpecificOutput"
		if event == "ConfigChange" {
			wantType = "SyncHookJSONOutput" // the SDK has no ConfigChangeHookSpecificOutput
		}
		if strings.HasSuffix(name, inputSuffix) {
			wantType = event + "HookInput"
		}
		if !strings.Contains(m[3], wantType) {
			t.Errorf("%s: $comment types %q do not include %s", name, m[3], wantType)
		}
		if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" {
			t.Errorf("%s: $schema = %v, want draft 2020-12", name, doc["$schema"])
		}
	}
}

// TestOutputSchemaShape checks the properties that make the output schemas
// useful as a guard: closed objects, the event name pinned, and the same
// SyncHookJSONOutput top level for every event.
func TestOutputSchemaShape(t *testing.T) {
	var common map[string]any
	for _, event := range allEvents {
		name := event + outputSuffix
		doc := readSchema(t, name)
		if doc["additionalProperties"] != false {
			t.Errorf("%s: top level is not closed", name)
		}
		props := doc["properties"].(map[string]any)
		hso, ok := props["hookSpecificOutput"].(map[string]any)
		if !ok && event == "ConfigChange" { // no hookSpecificOutput type is ConfigChange's
			hso = map[string]any{"additionalProperties": false, "required": []any{"hookEventName"},
				"properties": map[string]any{"hookEventName": map[string]any{"const": event}}}
		}
		if hso["additionalProperties"] != false {
			t.Errorf("%s: hookSpecificOutput is not closed", name)
		}
		hen := hso["properties"].(map[string]any)["hookEventName"].(map[string]any)
		if hen["const"] != event {
			t.Errorf("%s: hookEventName const = %v, want %q", name, hen["const"], event)
		}
		if !slices.Contains(hso["required"].([]any), any("hookEventName")) {
			t.Errorf("%s: hookEventName is not required", name)
		}
		delete(props, "hookSpecificOutput")
		if common == nil {
			common = props
		} else if !reflect.DeepEqual(props, common) {
			t.Errorf("%s: top-level properties differ from %s's", name, allEvents[0])
		}
	}
}

func readSchema(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := files.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return doc
}
