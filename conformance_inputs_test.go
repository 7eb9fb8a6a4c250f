package stopgate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/schema"
)

// capturedEvents holds one hook input per kind as the real client sent it, recorded by
// the end-to-end suite (go test ./internal/e2e -run . -update) with temporary paths
// replaced by {{ROOT}}, {{HOME}} and {{PROJECT_KEY}}. A file is named for its kind:
// EVENT[.TOOL][.subagent].json.
const capturedEvents = "testdata/events/captured"

// TestCapturedInputsConform checks every captured input against the SDK's input schema
// of its event and through stopgate's own decoder, and that its name says what it is.
func TestCapturedInputsConform(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(capturedEvents, "*.json"))
	kinds := map[string]bool{}
	for _, f := range files {
		kind := strings.TrimSuffix(filepath.Base(f), ".json")
		kinds[kind] = true
		data := readEvent(t, f)
		in, err := hook.Parse(data)
		if err != nil {
			t.Errorf("%s: stopgate cannot read it: %v", f, err)
			continue
		}
		if err := schema.ValidateInput(in.HookEventName, data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		if got := inputKind(in); got != kind {
			t.Errorf("%s holds a %s input", f, got)
		}
	}
	// The kinds stopgate's hooks are registered for, as the suite records them.
	for _, want := range []string{"PostToolUse.Read", "PostToolUse.Read.subagent", "UserPromptSubmit", "UserPromptExpansion", "Stop", "SubagentStop"} {
		if !kinds[want] {
			t.Errorf("no captured %s input in %s: run the e2e suite with -update", want, capturedEvents)
		}
	}
}

// TestHandWrittenEventsMatchTheClient keeps the hand-written events of make demo
// (testdata/events/*.json) true to the client: valid by the SDK's schema, and with the
// same fields, of the same JSON types, as the captured input of their kind.
func TestHandWrittenEventsMatchTheClient(t *testing.T) {
	files, _ := filepath.Glob("testdata/events/*.json")
	if len(files) == 0 {
		t.Fatal("no hand-written events in testdata/events")
	}
	for _, f := range files {
		data := readEvent(t, f)
		in, err := hook.Parse(data)
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if err := schema.ValidateInput(in.HookEventName, data); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		kind := inputKind(in)
		captured := filepath.Join(capturedEvents, kind+".json")
		if _, err := os.Stat(captured); err != nil {
			t.Errorf("%s: no captured %s input to compare it with", f, kind)
			continue
		}
		want, got := fieldShape(t, readEvent(t, captured)), fieldShape(t, data)
		for _, l := range want {
			if !slices.Contains(got, l) {
				t.Errorf("%s lacks %s, which the client sends (%s)", f, l, captured)
			}
		}
		for _, l := range got {
			if !slices.Contains(want, l) {
				t.Errorf("%s has %s, which the client does not send (%s)", f, l, captured)
			}
		}
	}
}

// inputKind names an input's kind as the captured files are named.
func inputKind(in *hook.Input) string {
	k := in.HookEventName
	if in.ToolName != "" {
		k += "." + in.ToolName
	}
	if in.AgentID != "" && in.HookEventName != hook.SubagentStop {
		k += ".subagent"
	}
	return k
}

// readEvent reads an event file with its placeholders filled in, as make demo does.
func readEvent(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return []byte(strings.NewReplacer("{{ROOT}}", "/work/project", "{{HOME}}", "/home/user",
		"{{PROJECT_KEY}}", "-work-project").Replace(string(data)))
}

// fieldShape lists an object's fields as "path: JSON type", nested objects included
// except tool_input (the model's choice, not the client's). Arrays are not entered.
func fieldShape(t *testing.T, data []byte) []string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, v := range m {
			path := prefix + k
			typ := "null"
			switch v := v.(type) {
			case map[string]any:
				typ = "object"
				if path != "tool_input" {
					walk(path+".", v)
				}
			case []any:
				typ = "array"
			case string:
				typ = "string"
			case float64:
				typ = "number"
			case bool:
				typ = "boolean"
			}
			out = append(out, path+": "+typ)
		}
	}
	walk("", m)
	slices.Sort(out)
	return out
}
