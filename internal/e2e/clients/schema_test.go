package clients

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/stopgate/stopgate/internal/e2e"
)

var schemas = struct {
	sync.Mutex
	c *jsonschema.Compiler
}{c: jsonschema.NewCompiler()}

// checkInputs validates every captured hook input against its client's schema for the
// event (testdata/schema/<client>/<event>.input.schema.json). Copilot's native inputs
// do not name their event: it is the one on the hook's command line.
func checkInputs(t *testing.T, client string, inputs []Captured) {
	t.Helper()
	if len(inputs) == 0 {
		t.Error("no hook input captured")
	}
	for _, in := range inputs {
		checkSchema(t, filepath.Join(client, in.event()+".input.schema.json"), in.Raw)
	}
}

func checkSchema(t *testing.T, name string, doc []byte) {
	t.Helper()
	path := filepath.Join(e2e.Root(t), "testdata", "schema", name)
	if _, err := os.Stat(path); err != nil {
		t.Errorf("no schema %s for %s", name, doc)
		return
	}
	schemas.Lock()
	defer schemas.Unlock()
	sch, err := schemas.c.Compile(path)
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(string(doc)))
	if err != nil {
		t.Errorf("%s: input is not JSON: %v", name, err)
		return
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s rejects a real input: %v\n%s", name, err, doc)
	}
}

// event names the hook event of a captured input.
func (c Captured) event() string {
	if event := c.field("hook_event_name"); event != "" {
		return event
	}
	return nativeEvent(c.Raw)
}

// nativeEvent names the event of a Copilot native input, which does not say: the
// fields only that event has tell.
func nativeEvent(raw []byte) string {
	var m map[string]any
	json.Unmarshal(raw, &m)
	has := func(k string) bool { _, ok := m[k]; return ok }
	switch {
	case has("toolResult"):
		return "postToolUse"
	case has("toolName"):
		return "preToolUse"
	case has("prompt"):
		return "userPromptSubmitted"
	case has("agentType"):
		return "subagentStop"
	}
	return "agentStop"
}
