package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// TestSmoke proves the round trip with plain shell hooks, independent of stopgate: the
// model's Read reaches a PostToolUse hook with the expected input, and a Stop hook's
// block reason reaches the model, which then stops for good.
func TestSmoke(t *testing.T) {
	p := NewProject(t)
	p.WriteFile("hello.txt", "hello world\n")
	// record saves the hook's input as tmp/NAME.N.json (one file per run).
	p.WriteFile("bin/record", `#!/bin/sh
mkdir -p "$CLAUDE_PROJECT_DIR/tmp"
n=$(ls "$CLAUDE_PROJECT_DIR/tmp" | grep -c "^$1\.")
cat > "$CLAUDE_PROJECT_DIR/tmp/$1.$n.json"
`)
	// block-once blocks the first stop only.
	p.WriteFile("bin/block-once", `#!/bin/sh
"$CLAUDE_PROJECT_DIR"/bin/record stop
[ -e "$CLAUDE_PROJECT_DIR/tmp/stop.1.json" ] || echo '{"decision":"block","reason":"XYZ"}'
`)
	p.Hook("PostToolUse", "Read", `"$CLAUDE_PROJECT_DIR"/bin/record read`)
	p.Hook("Stop", "", `"$CLAUDE_PROJECT_DIR"/bin/block-once`)

	api := fakellm.Start(t, fakellm.Anthropic, fakellm.Script{
		fakellm.When(fakellm.LastHas("XYZ"), fakellm.Text("Fixed it.")),
		fakellm.When(fakellm.ResultOf("Read"), fakellm.Text("I read it.")),
		fakellm.When(fakellm.AtTurn(0), fakellm.Tool("Read", map[string]any{"file_path": p.Path("hello.txt")})),
	})
	res := p.Run(api, "Read hello.txt")

	if res.Final.TerminalReason != "completed" || res.Final.Result != "Fixed it." {
		res.Fatalf("result: terminal_reason %q, result %q; want completed, %q", res.Final.TerminalReason, res.Final.Result, "Fixed it.")
	}
	var read struct {
		HookEventName string `json:"hook_event_name"`
		ToolName      string `json:"tool_name"`
		ToolInput     struct {
			FilePath string `json:"file_path"`
		} `json:"tool_input"`
		ToolResponse struct {
			File struct {
				FilePath string `json:"filePath"`
				Content  string `json:"content"`
			} `json:"file"`
		} `json:"tool_response"`
		TranscriptPath string `json:"transcript_path"`
		AgentID        string `json:"agent_id"`
	}
	if err := json.Unmarshal([]byte(p.ReadFile("tmp/read.0.json")), &read); err != nil {
		res.Fatalf("PostToolUse input: %v", err)
	}
	if read.HookEventName != "PostToolUse" || read.ToolName != "Read" ||
		read.ToolInput.FilePath != p.Path("hello.txt") || read.ToolResponse.File.FilePath != p.Path("hello.txt") ||
		read.ToolResponse.File.Content != "hello world\n" || read.AgentID != "" {
		res.Errorf("PostToolUse input: %+v", read)
	}
	if read.TranscriptPath != res.Transcript || res.Transcript == "" {
		res.Errorf("transcript: hook saw %q, harness found %q", read.TranscriptPath, res.Transcript)
	}

	var stops []struct {
		Active bool   `json:"stop_hook_active"`
		Last   string `json:"last_assistant_message"`
	}
	for _, name := range []string{"tmp/stop.0.json", "tmp/stop.1.json"} {
		var s struct {
			Active bool   `json:"stop_hook_active"`
			Last   string `json:"last_assistant_message"`
		}
		if err := json.Unmarshal([]byte(p.ReadFile(name)), &s); err != nil {
			res.Fatalf("Stop input %s: %v", name, err)
		}
		stops = append(stops, s)
	}
	if stops[0].Active || stops[0].Last != "I read it." || !stops[1].Active || stops[1].Last != "Fixed it." {
		res.Errorf("Stop inputs: %+v", stops)
	}
	if p.ReadFile("tmp/stop.2.json") != "" {
		res.Errorf("Stop hook ran a third time")
	}

	// The block reason reached the model twice: as a user message and as a system
	// entry quoting the command (unescaped).
	if !res.Told("Stop hook feedback:\nXYZ") || !res.Told(`Stop hook blocking error from command: ""$CLAUDE_PROJECT_DIR"/bin/block-once": XYZ`) {
		res.Errorf("the model was not told the block reason")
	}
	if n := len(res.Requests); n != 3 {
		res.Errorf("%d model requests, want 3 (Read, stop, fix)", n)
	}

	var events []string
	for _, h := range res.HookRuns() {
		events = append(events, h.Event+":"+h.Matcher)
	}
	if got, want := strings.Join(events, " "), "PostToolUse:Read Stop: Stop:"; got != want {
		res.Errorf("hook runs %q, want %q", got, want)
	}
	res.CheckHooks()
}
