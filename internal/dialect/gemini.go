package dialect

import (
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/hook"
)

// gemini is Gemini CLI. Its events have their own names, its tools their
// own names and fields; its answers are Claude Code's, except that a tool
// call is refused with decision "deny" and a reason.
type gemini struct{ showsHalt }

func (gemini) Name() string { return Gemini }

// geminiEvent maps Gemini CLI's events to stopgate's.
var geminiEvent = map[string]string{
	"AfterTool":   hook.PostToolUse,
	"BeforeTool":  hook.PreToolUse,
	"AfterAgent":  hook.Stop,
	"BeforeAgent": hook.UserPromptSubmit,
}

// geminiTool maps Gemini CLI's file tools to the Claude Code tool stopgate
// judges; each takes file_path like it. read_many_files and
// run_shell_command are translated on their own.
var geminiTool = map[string]string{"read_file": "Read", "write_file": "Write", "replace": "Edit"}

// geminiOutput is what Gemini CLI reads: Claude Code's fields, and a
// hookSpecificOutput that carries additionalContext.
type geminiOutput struct {
	hook.Output                        // its own hookSpecificOutput is shadowed
	HookSpecificOutput *geminiSpecific `json:"hookSpecificOutput,omitempty"`
}

type geminiSpecific struct {
	HookEventName     string `json:"hookEventName"`
	AdditionalContext string `json:"additionalContext,omitempty"`
}

func (gemini) Encode(event string, o hook.Output) any {
	out := geminiOutput{Output: o}
	if s := o.HookSpecificOutput; s != nil {
		if s.PermissionDecision == "deny" {
			out.Decision, out.Reason = "deny", s.PermissionDecisionReason
		}
		if s.AdditionalContext != "" {
			out.HookSpecificOutput = &geminiSpecific{HookEventName: event, AdditionalContext: s.AdditionalContext}
		}
	}
	return out
}

func decodeGemini(data []byte) (*hook.Input, error) {
	m, err := object(data, "tool_response", "llm_request", "llm_response")
	if err != nil {
		return nil, err
	}
	event := str(m, "hook_event_name")
	if e, ok := geminiEvent[event]; ok {
		m["hook_event_name"] = e
	}
	rename(m, "prompt_response", "last_assistant_message")
	tool := str(m, "tool_name")
	args, _ := m["tool_input"].(map[string]any)
	var reads []string
	var cwd string
	switch {
	case geminiTool[tool] != "":
		m["tool_name"] = geminiTool[tool]
	case tool == "read_many_files":
		m["tool_name"], m["tool_input"] = "Read", map[string]any{}
		reads = manyFiles(args, str(m, "cwd"))
	case tool == "run_shell_command":
		m["tool_name"] = "Bash"
		if d, _ := args["dir_path"].(string); d != "" {
			cwd = d // the command runs there, not in the session's cwd
		}
	}
	in, err := claudeShaped(m)
	if err != nil {
		return nil, err
	}
	in.Client, in.ClientEvent, in.Reads = gemini{}, event, reads
	if cwd != "" {
		if !filepath.IsAbs(cwd) {
			cwd = filepath.Join(in.Cwd, cwd)
		}
		in.Calls = []hook.Call{{Tool: in.ToolName, Input: in.Tool, Cwd: cwd}}
	}
	return in, nil
}

// manyFiles returns the files read_many_files reads: its include operands,
// literal paths and globs without "**", from the working directory. A
// directory or a recursive glob is not expanded (a documented limit).
func manyFiles(args map[string]any, cwd string) []string {
	out := []string{}
	list, _ := args["include"].([]any)
	for _, v := range list {
		p, _ := v.(string)
		if p == "" || strings.Contains(p, "**") {
			continue
		}
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		if !strings.ContainsAny(p, "*?[") {
			out = append(out, filepath.Clean(p))
			continue
		}
		matches, _ := filepath.Glob(p)
		out = append(out, matches...)
	}
	return out
}
