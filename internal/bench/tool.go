package bench

import "path/filepath"

// ToolEvent is the PreToolUse input of session calling tool with input,
// which detect's tamper guard judges.
func ToolEvent(root, session, tool string, input map[string]any) []byte {
	return event(map[string]any{
		"session_id":      session,
		"transcript_path": filepath.Join(root, ".transcripts", session+".jsonl"),
		"cwd":             root,
		"permission_mode": "default",
		"hook_event_name": "PreToolUse",
		"tool_name":       tool,
		"tool_input":      input,
		"tool_use_id":     "toolu_bench",
	})
}
