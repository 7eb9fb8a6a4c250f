package dialect

import (
	"github.com/stopgate/stopgate/internal/hook"
)

// opencode is OpenCode, through the plugin `gate init --client opencode`
// writes: OpenCode has no command hooks, so the plugin sends the commands
// Claude-shaped events (hook_event_name, session_id, cwd, tool_name,
// tool_input; stop_hook_active from its own count of continuations) with
// OpenCode's tool names and arguments, and reads Claude Code's answers.
type opencode struct{ showsHalt }

func (opencode) Name() string { return OpenCode }

func (opencode) Encode(_ string, o hook.Output) any { return o }

// opencodeTool maps OpenCode's tools to the Claude Code tools stopgate
// judges; their file argument is filePath.
var opencodeTool = map[string]string{"read": "Read", "write": "Write", "edit": "Edit", "patch": "Edit", "bash": "Bash"}

func decodeOpenCode(data []byte) (*hook.Input, error) {
	m, err := object(data, "tool_response")
	if err != nil {
		return nil, err
	}
	event := str(m, "hook_event_name")
	if t, ok := opencodeTool[str(m, "tool_name")]; ok {
		m["tool_name"] = t
		if args, ok := m["tool_input"].(map[string]any); ok {
			if p, ok := args["filePath"]; ok {
				args["file_path"] = p
			}
		}
	}
	in, err := claudeShaped(m)
	if err != nil {
		return nil, err
	}
	in.Client, in.ClientEvent = opencode{}, event
	return in, nil
}
