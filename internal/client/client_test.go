package client

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/stopgate/stopgate/internal/hook"
)

// The inputs are the shapes captured from the real clients (see
// ../shared/agent-clients.md), with the elided parts filled in.
const (
	geminiAfterAgent = `{"session_id":"bb15","transcript_path":"/h/.gemini/tmp/proj/chats/session-1.jsonl","cwd":"/p","hook_event_name":"AfterAgent","timestamp":"2026-11-22T21:25:59.493Z","prompt":"say hi","prompt_response":"REPLY","stop_hook_active":false}`
	geminiAfterTool  = `{"session_id":"bb15","transcript_path":"/t","cwd":"/p","hook_event_name":"AfterTool","timestamp":"2026-11-22T21:25:59.493Z","tool_name":"read_file","tool_input":{"file_path":"/p/src/prompts/joke.md"},"tool_response":{"llmContent":"# joke","returnDisplay":""}}`
	geminiMany       = `{"session_id":"bb15","transcript_path":"/t","cwd":"/p","hook_event_name":"AfterTool","timestamp":"2026-11-22T21:25:59.493Z","tool_name":"read_many_files","tool_input":{"include":["src/prompts/joke.md","/p/docs/a.md","src/**/*.md"]},"tool_response":{"llmContent":"…"}}`
	geminiBeforeTool = `{"session_id":"bb15","transcript_path":"/t","cwd":"/p","hook_event_name":"BeforeTool","timestamp":"2026-11-22T21:25:59.493Z","tool_name":"write_file","tool_input":{"file_path":"/p/mappings.toml","content":"x"}}`
	geminiShell      = `{"session_id":"bb15","transcript_path":"/t","cwd":"/p","hook_event_name":"BeforeTool","timestamp":"2026-11-22T21:25:59.493Z","tool_name":"run_shell_command","tool_input":{"command":"rm -rf validation","dir_path":"tmp"}}`
	geminiPrompt     = `{"session_id":"bb15","transcript_path":"/t","cwd":"/p","hook_event_name":"BeforeAgent","timestamp":"2026-11-22T21:25:59.493Z","prompt":"/joke now"}`

	codexStop        = `{"session_id":"01a2","turn_id":"01a3","transcript_path":"/h/.codex/sessions/2026/11/22/rollout-1.jsonl","cwd":"/p","hook_event_name":"Stop","model":"fake-model","permission_mode":"bypassPermissions","stop_hook_active":false,"last_assistant_message":"REPLY"}`
	codexSubagent    = `{"session_id":"01a2","turn_id":"01a3","transcript_path":null,"cwd":"/p","hook_event_name":"SubagentStop","model":"fake-model","permission_mode":"default","stop_hook_active":true,"last_assistant_message":null,"agent_id":"ag1","agent_type":"worker","agent_transcript_path":"/a.jsonl"}`
	codexPostBash    = `{"session_id":"01a2","turn_id":"01a3","transcript_path":"/t","cwd":"/p","hook_event_name":"PostToolUse","model":"fake-model","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"cat notes.txt src/prompts/joke.md | head -n 3 && sed -n '1,20p' docs/b.md"},"tool_response":"…","tool_use_id":"call_1"}`
	codexPreBash     = `{"session_id":"01a2","turn_id":"01a3","transcript_path":"/t","cwd":"/p","hook_event_name":"PreToolUse","model":"fake-model","permission_mode":"bypassPermissions","tool_name":"Bash","tool_input":{"command":"echo x > mappings.toml"},"tool_use_id":"call_2"}`
	codexApplyPatch  = `{"session_id":"01a2","turn_id":"01a3","transcript_path":"/t","cwd":"/p","hook_event_name":"PreToolUse","model":"fake-model","permission_mode":"bypassPermissions","tool_name":"apply_patch","tool_input":{"command":"*** Begin Patch\n*** Update File: output/joke.txt\n@@\n-a\n+b\n*** Add File: mappings.toml\n+x\n*** End Patch\n"},"tool_use_id":"call_3"}`
	codexPromptInput = `{"session_id":"01a2","turn_id":"01a3","transcript_path":"/t","cwd":"/p","hook_event_name":"UserPromptSubmit","model":"fake-model","permission_mode":"default","prompt":"/joke"}`

	copilotAgentStop    = `{"sessionId":"3854","timestamp":1795383237966,"cwd":"/p","transcriptPath":"/h/.copilot/session-state/3854/events.jsonl","stopReason":"end_turn","stop_hook_active":false}`
	copilotChildStop    = `{"sessionId":"3854","timestamp":1795383237966,"cwd":"/p","transcriptPath":"/t","stopReason":"end_turn","stop_hook_active":false,"agentId":"11f7","parentAgentId":"b516"}`
	copilotSubagentStop = `{"sessionId":"3854","timestamp":1795383237966,"cwd":"/p","agentId":"11f7","agentType":"general-purpose","agentName":"general-purpose","response":"done","stopReason":"end_turn","stop_hook_active":false,"parentAgentId":"b516"}`
	copilotPostView     = `{"sessionId":"3854","timestamp":1795383237966,"cwd":"/p","toolName":"view","toolArgs":{"path":"/p/src/prompts/joke.md"},"toolResult":{"resultType":"success","textResultForLlm":"# joke"}}`
	copilotPreCreate    = `{"sessionId":"3854","timestamp":1795383237966,"cwd":"/p","toolName":"create","toolArgs":{"path":"/p/mappings.toml","file_text":"x"}}`
	copilotPreBashText  = `{"sessionId":"3854","timestamp":1795383237966,"cwd":"/p","toolName":"bash","toolArgs":"{\"command\":\"rm -rf tmp/validation\"}"}`
	copilotPrompt       = `{"sessionId":"3854","timestamp":1795383237966,"cwd":"/p","prompt":"/joke"}`
	opencodeRead        = `{"cwd":"/p","hook_event_name":"PostToolUse","session_id":"ses_1","tool_name":"read","tool_input":{"filePath":"/p/src/prompts/joke.md"}}`
	opencodeWrite       = `{"cwd":"/p","hook_event_name":"PreToolUse","session_id":"ses_1","tool_name":"write","tool_input":{"filePath":"/p/mappings.toml","content":""}}`
	opencodeStop        = `{"cwd":"/p","hook_event_name":"Stop","session_id":"ses_1","stop_hook_active":true}`
	copilotChildView    = `{"sessionId":"11f7","timestamp":1795383237966,"cwd":"/p","toolName":"view","toolArgs":{"path":"/p/a.md"},"toolResult":{"resultType":"success","textResultForLlm":"…"},"agentId":"11f7","agentType":"general-purpose","parentAgentId":"3854"}`
	// VS Code agent mode, from its documentation and the extension's source
	// (vscode.go): snake_case with a timestamp, or the documented camelCase
	// common fields.
	vscodeRead        = `{"timestamp":"2026-11-28T21:00:00.000Z","hook_event_name":"PostToolUse","session_id":"vs1","transcript_path":"/t.json","cwd":"/p","tool_name":"read_file","tool_input":{"filePath":"/p/src/prompts/joke.md","startLine":1,"endLine":40},"tool_use_id":"t1","tool_response":"# joke"}`
	vscodeCreate      = `{"timestamp":"2026-11-28T21:00:01.000Z","hook_event_name":"PreToolUse","session_id":"vs1","cwd":"/p","tool_name":"create_file","tool_input":{"filePath":"/p/mappings.toml","content":""},"tool_use_id":"t2"}`
	vscodeTerminal    = `{"timestamp":"2026-11-28T21:00:02.000Z","hook_event_name":"PreToolUse","session_id":"vs1","cwd":"/p","tool_name":"run_in_terminal","tool_input":{"command":"rm -rf tmp/validation","explanation":"x","isBackground":false},"tool_use_id":"t3"}`
	vscodeMulti       = `{"timestamp":"2026-11-28T21:00:03.000Z","hook_event_name":"PreToolUse","session_id":"vs1","cwd":"/p","tool_name":"multi_replace_string_in_file","tool_input":{"replacements":[{"filePath":"/p/a.md","oldString":"a","newString":"b"},{"filePath":"/p/mappings.toml","oldString":"a","newString":"b"}]},"tool_use_id":"t4"}`
	vscodeEditFiles   = `{"timestamp":"2026-02-09T10:30:00.000Z","cwd":"/p","sessionId":"vs1","hookEventName":"PreToolUse","transcript_path":"/t.json","tool_name":"editFiles","tool_input":{"files":["src/main.ts","mappings.toml"]},"tool_use_id":"tool-123"}`
	vscodePatch       = `{"timestamp":"2026-11-28T21:00:04.000Z","hook_event_name":"PreToolUse","session_id":"vs1","cwd":"/p","tool_name":"apply_patch","tool_input":{"input":"*** Begin Patch\n*** Update File: /p/mappings.toml\n@@\n-a\n+b\n*** End Patch"},"tool_use_id":"t5"}`
	vscodeStopIn      = `{"timestamp":"2026-11-28T21:00:10.000Z","hook_event_name":"Stop","session_id":"vs1","transcript_path":"/t.json","cwd":"/p","stop_hook_active":true}`
	vscodeSubagent    = `{"timestamp":"2026-11-28T21:00:11.000Z","hook_event_name":"SubagentStop","session_id":"vs1","cwd":"/p","agent_id":"subagent-456","agent_type":"Plan","stop_hook_active":false}`
	copilotClaudeRead = `{"hook_event_name":"PostToolUse","session_id":"3854","cwd":"/p","tool_name":"Read","tool_input":{"path":"/p/src/prompts/joke.md"},"tool_result":{"result_type":"success","text_result_for_llm":"# joke"}}`
)

var allEvents = []string{hook.PreToolUse, hook.PostToolUse, hook.UserPromptSubmit, hook.UserPromptExpansion, hook.Stop, hook.SubagentStop}

// want is what a test checks of a decoded input.
type want struct {
	client, event, clientEvent string
	session, agent, agentType  string
	tool, filePath, command    string
	reads                      []string
	calls                      []string // "Tool file_path-or-command"
	stopActive                 bool
	last, prompt               string
}

func TestDecode(t *testing.T) {
	tests := []struct {
		name, in, client, event string
		want                    want
	}{
		{"gemini AfterAgent", geminiAfterAgent, Gemini.Name, "", want{client: Gemini.Name, event: hook.Stop, clientEvent: "AfterAgent", session: "bb15", last: "REPLY", prompt: "say hi"}},
		{"gemini AfterTool read_file", geminiAfterTool, Gemini.Name, "", want{client: Gemini.Name, event: hook.PostToolUse, clientEvent: "AfterTool", session: "bb15", tool: "Read", filePath: "/p/src/prompts/joke.md", reads: []string{"/p/src/prompts/joke.md"}}},
		{"gemini read_many_files", geminiMany, Gemini.Name, "", want{client: Gemini.Name, event: hook.PostToolUse, clientEvent: "AfterTool", session: "bb15", tool: "Read", reads: []string{"/p/src/prompts/joke.md", "/p/docs/a.md"}}},
		{"gemini BeforeTool write_file", geminiBeforeTool, Gemini.Name, "", want{client: Gemini.Name, event: hook.PreToolUse, clientEvent: "BeforeTool", session: "bb15", tool: "Write", filePath: "/p/mappings.toml", calls: []string{"Write /p/mappings.toml"}}},
		{"gemini shell in dir_path", geminiShell, Gemini.Name, "", want{client: Gemini.Name, event: hook.PreToolUse, clientEvent: "BeforeTool", session: "bb15", tool: "Bash", command: "rm -rf validation", calls: []string{"Bash rm -rf validation in /p/tmp"}}},
		{"gemini BeforeAgent", geminiPrompt, "", "", want{client: Gemini.Name, event: hook.UserPromptSubmit, clientEvent: "BeforeAgent", session: "bb15", prompt: "/joke now"}},

		{"codex Stop", codexStop, Codex.Name, "", want{client: Codex.Name, event: hook.Stop, clientEvent: "Stop", session: "01a2", last: "REPLY"}},
		{"codex SubagentStop", codexSubagent, "", "", want{client: Codex.Name, event: hook.SubagentStop, clientEvent: "SubagentStop", session: "01a2", agent: "ag1", agentType: "worker", stopActive: true}},
		{"codex PostToolUse Bash", codexPostBash, Codex.Name, "", want{client: Codex.Name, event: hook.PostToolUse, clientEvent: "PostToolUse", session: "01a2", tool: "Bash",
			command: "cat notes.txt src/prompts/joke.md | head -n 3 && sed -n '1,20p' docs/b.md"}}, // what it reads: detect asks guard.ShellReads
		{"codex PreToolUse Bash", codexPreBash, Codex.Name, "", want{client: Codex.Name, event: hook.PreToolUse, clientEvent: "PreToolUse", session: "01a2", tool: "Bash", command: "echo x > mappings.toml", calls: []string{"Bash echo x > mappings.toml"}}},
		{"codex apply_patch", codexApplyPatch, Codex.Name, "", want{client: Codex.Name, event: hook.PreToolUse, clientEvent: "PreToolUse", session: "01a2", tool: "apply_patch",
			command: "", calls: []string{"Write output/joke.txt", "Write mappings.toml"}}},
		{"codex UserPromptSubmit", codexPromptInput, Codex.Name, "", want{client: Codex.Name, event: hook.UserPromptSubmit, clientEvent: "UserPromptSubmit", session: "01a2", prompt: "/joke"}},

		{"copilot agentStop", copilotAgentStop, Copilot.Name, "agentStop", want{client: Copilot.Name, event: hook.Stop, clientEvent: "agentStop", session: "3854"}},
		{"copilot agentStop inferred", copilotAgentStop, "", "", want{client: Copilot.Name, event: hook.Stop, clientEvent: "agentStop", session: "3854"}},
		{"copilot subagentStop", copilotSubagentStop, Copilot.Name, "subagentStop", want{client: Copilot.Name, event: hook.SubagentStop, clientEvent: "subagentStop", session: "3854", agent: "11f7", agentType: "general-purpose", last: "done"}},
		{"copilot postToolUse view", copilotPostView, Copilot.Name, "postToolUse", want{client: Copilot.Name, event: hook.PostToolUse, clientEvent: "postToolUse", session: "3854", tool: "Read", filePath: "/p/src/prompts/joke.md", reads: []string{"/p/src/prompts/joke.md"}}},
		{"copilot subagent's view, in the parent's session", copilotChildView, Copilot.Name, "postToolUse", want{client: Copilot.Name, event: hook.PostToolUse, clientEvent: "postToolUse", session: "3854", agent: "11f7", agentType: "general-purpose", tool: "Read", filePath: "/p/a.md", reads: []string{"/p/a.md"}}},
		{"copilot preToolUse create", copilotPreCreate, Copilot.Name, "preToolUse", want{client: Copilot.Name, event: hook.PreToolUse, clientEvent: "preToolUse", session: "3854", tool: "Write", filePath: "/p/mappings.toml", calls: []string{"Write /p/mappings.toml"}}},
		{"copilot toolArgs as JSON text", copilotPreBashText, Copilot.Name, "preToolUse", want{client: Copilot.Name, event: hook.PreToolUse, clientEvent: "preToolUse", session: "3854", tool: "Bash", command: "rm -rf tmp/validation", calls: []string{"Bash rm -rf tmp/validation"}}},
		{"copilot userPromptSubmitted", copilotPrompt, Copilot.Name, "userPromptSubmitted", want{client: Copilot.Name, event: hook.UserPromptSubmit, clientEvent: "userPromptSubmitted", session: "3854", prompt: "/joke"}},
		{"opencode read", opencodeRead, OpenCode.Name, "", want{client: OpenCode.Name, event: hook.PostToolUse, clientEvent: "PostToolUse", session: "ses_1", tool: "Read", filePath: "/p/src/prompts/joke.md", reads: []string{"/p/src/prompts/joke.md"}}},
		{"opencode write", opencodeWrite, OpenCode.Name, "", want{client: OpenCode.Name, event: hook.PreToolUse, clientEvent: "PreToolUse", session: "ses_1", tool: "Write", filePath: "/p/mappings.toml", calls: []string{"Write /p/mappings.toml"}}},
		{"opencode stop", opencodeStop, OpenCode.Name, "", want{client: OpenCode.Name, event: hook.Stop, clientEvent: "Stop", session: "ses_1", stopActive: true}},
		{"vscode read_file, Claude's registration", vscodeRead, "", "", want{client: VSCode.Name, event: hook.PostToolUse, clientEvent: "PostToolUse", session: "vs1", tool: "Read", filePath: "/p/src/prompts/joke.md", reads: []string{"/p/src/prompts/joke.md"}}},
		{"vscode read_file, Copilot's registration", vscodeRead, Copilot.Name, "postToolUse", want{client: VSCode.Name, event: hook.PostToolUse, clientEvent: "PostToolUse", session: "vs1", tool: "Read", filePath: "/p/src/prompts/joke.md", reads: []string{"/p/src/prompts/joke.md"}}},
		{"vscode create_file", vscodeCreate, Copilot.Name, "preToolUse", want{client: VSCode.Name, event: hook.PreToolUse, clientEvent: "PreToolUse", session: "vs1", tool: "Write", filePath: "/p/mappings.toml", calls: []string{"Write /p/mappings.toml"}}},
		{"vscode run_in_terminal", vscodeTerminal, "", "", want{client: VSCode.Name, event: hook.PreToolUse, clientEvent: "PreToolUse", session: "vs1", tool: "Bash", command: "rm -rf tmp/validation", calls: []string{"Bash rm -rf tmp/validation"}}},
		{"vscode multi_replace_string_in_file", vscodeMulti, "", "", want{client: VSCode.Name, event: hook.PreToolUse, clientEvent: "PreToolUse", session: "vs1", tool: "multi_replace_string_in_file", calls: []string{"Write /p/a.md", "Write /p/mappings.toml"}}},
		{"vscode documented editFiles", vscodeEditFiles, Copilot.Name, "preToolUse", want{client: VSCode.Name, event: hook.PreToolUse, clientEvent: "PreToolUse", session: "vs1", tool: "editFiles", calls: []string{"Write src/main.ts", "Write mappings.toml"}}},
		{"vscode apply_patch", vscodePatch, "", "", want{client: VSCode.Name, event: hook.PreToolUse, clientEvent: "PreToolUse", session: "vs1", tool: "apply_patch", calls: []string{"Write /p/mappings.toml"}}},
		{"vscode Stop, Copilot's registration", vscodeStopIn, Copilot.Name, "agentStop", want{client: VSCode.Name, event: hook.Stop, clientEvent: "Stop", session: "vs1", stopActive: true}},
		{"vscode SubagentStop", vscodeSubagent, "", "", want{client: VSCode.Name, event: hook.SubagentStop, clientEvent: "SubagentStop", session: "vs1", agent: "subagent-456", agentType: "Plan"}},
		{"copilot Claude-shaped Read", copilotClaudeRead, "", "", want{client: Copilot.Name, event: hook.PostToolUse, clientEvent: "PostToolUse", session: "3854", tool: "Read", filePath: "/p/src/prompts/joke.md", reads: []string{"/p/src/prompts/joke.md"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Parse([]byte(tt.in), Options{Client: tt.client, Event: tt.event}, allEvents...)
			if err != nil {
				t.Fatal(err)
			}
			if got := describeInput(in); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("decoded\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func describeInput(in *hook.Input) want {
	w := want{client: Claude.Name, event: in.HookEventName, clientEvent: in.ClientEvent, session: in.SessionID, agent: in.AgentID, agentType: in.AgentType,
		tool: in.ToolName, filePath: in.Tool.FilePath, command: in.Tool.Command, reads: in.ReadPaths(),
		stopActive: in.StopHookActive, last: in.LastAssistantMessage, prompt: in.Prompt}
	if in.Client != nil {
		w.client = in.Client.Name
	}
	if in.HookEventName == hook.PreToolUse {
		for _, c := range in.GuardCalls() {
			s := c.Tool + " " + c.Input.FilePath + c.Input.Command
			if c.Cwd != "" {
				s += " in " + c.Cwd
			}
			w.calls = append(w.calls, s)
		}
	}
	return w
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, in, client, event string
		events                  []string
		want                    string // in the error
	}{
		{"codex input to a gemini hook", codexStop, Gemini.Name, "", []string{hook.Stop}, "hook input is from codex, but this hook is registered with --client gemini; register it with: gate init --client codex"},
		{"gemini input to a copilot hook", geminiAfterAgent, Copilot.Name, "", []string{hook.Stop}, "is from gemini, but this hook is registered with --client copilot"},
		{"copilot input to a claude hook", copilotAgentStop, Claude.Name, "", []string{hook.Stop}, "is from copilot, but this hook is registered with --client claude"},
		{"unknown client", codexStop, "windsurf", "", nil, `unknown --client "windsurf", want one of claude, codex, gemini, copilot`},
		{"gemini event the hook does not take", geminiAfterTool, Gemini.Name, "", []string{hook.Stop}, `unsupported gemini hook event "AfterTool": this hook handles Stop`},
		{"copilot event the hook does not take", copilotPostView, Copilot.Name, "postToolUse", []string{hook.Stop, hook.SubagentStop}, `unsupported copilot hook event "postToolUse"`},
		{"wrong type", `{"session_id":"s","hook_event_name":"AfterTool","tool_name":"read_file","tool_input":{"file_path":7}}`, Gemini.Name, "", nil, `hook input field "tool_input.file_path" is a JSON number, want a string`},
		{"not an object", `[1]`, Codex.Name, "", nil, "hook input is a JSON array, want one JSON object"},
		{"empty", " \n", Gemini.Name, "", nil, "no hook input on stdin"},
		{"no session", `{"sessionId":"","timestamp":1,"cwd":"/p","stopReason":"end_turn"}`, Copilot.Name, "agentStop", nil, "hook input has no session_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Parse([]byte(tt.in), Options{Client: tt.client, Event: tt.event}, tt.events...)
			if err == nil || in != nil {
				t.Fatalf("got %+v, %v; want an error", in, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error is not one line: %q", err)
			}
		})
	}
}

// A mismatch carries the input decoded as it came, so that the gate can
// halt in the shape the sending client reads.
func TestMismatchCarriesInput(t *testing.T) {
	_, err := Parse([]byte(geminiAfterAgent), Options{Client: Codex.Name}, hook.Stop)
	var mm *MismatchError
	if !errors.As(err, &mm) || mm.Input == nil || mm.Input.Client == nil || mm.Input.Client.Name != Gemini.Name {
		t.Fatalf("got %#v", err)
	}
}

// Copilot fires agentStop for a subagent too, with parentAgentId; a block
// there is ignored by the client, and the child is gated at subagentStop.
func TestCopilotChildAgentStopIgnored(t *testing.T) {
	_, err := Parse([]byte(copilotChildStop), Options{Client: Copilot.Name, Event: "agentStop"}, hook.Stop, hook.SubagentStop)
	if !errors.Is(err, ErrIgnored) {
		t.Fatalf("got %v, want ErrIgnored", err)
	}
}

// Claude Code input decodes exactly as hook.Parse does, with no client.
func TestClaudeIsTheReference(t *testing.T) {
	data := []byte(`{"session_id":"s1","transcript_path":"/t.jsonl","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/p/a.md"},"tool_response":{"type":"text"},"tool_use_id":"toolu_1"}`)
	got, err := Parse(data, Options{}, allEvents...)
	if err != nil {
		t.Fatal(err)
	}
	ref, _ := hook.Parse(data, allEvents...)
	if !reflect.DeepEqual(got, ref) || got.Client != nil {
		t.Errorf("got %+v\nwant %+v", got, ref)
	}
}

// TestEncode feeds each client's captured input through the engine's four
// answers and checks the printed line against the client's output schema,
// and the input against its input schema.
func TestEncode(t *testing.T) {
	const reason = "stopgate: fix it"
	tests := []struct {
		name, client, event, in string
		out                     hook.Output
		want                    string
	}{
		{"gemini block", Gemini.Name, "", geminiAfterAgent, hook.Block(reason), `{"decision":"block","reason":"stopgate: fix it"}`},
		{"gemini halt", Gemini.Name, "", geminiAfterAgent, hook.Halt(reason), `{"continue":false,"stopReason":"stopgate: fix it"}`},
		{"gemini deny", Gemini.Name, "", geminiBeforeTool, hook.Deny(hook.PreToolUse, reason), `{"decision":"deny","reason":"stopgate: fix it"}`},
		{"gemini context", Gemini.Name, "", geminiAfterTool, hook.Context(hook.PostToolUse, reason), `{"hookSpecificOutput":{"hookEventName":"AfterTool","additionalContext":"stopgate: fix it"}}`},
		{"gemini prompt context", Gemini.Name, "", geminiPrompt, hook.Context(hook.UserPromptSubmit, reason), `{"hookSpecificOutput":{"hookEventName":"BeforeAgent","additionalContext":"stopgate: fix it"}}`},

		{"codex block", Codex.Name, "", codexStop, hook.Block(reason), `{"decision":"block","reason":"stopgate: fix it"}`},
		{"codex subagent block", Codex.Name, "", codexSubagent, hook.Block(reason), `{"decision":"block","reason":"stopgate: fix it"}`},
		{"codex halt", Codex.Name, "", codexStop, hook.Halt(reason), `{"continue":false,"stopReason":"stopgate: fix it"}`},
		{"codex deny", Codex.Name, "", codexPreBash, hook.Deny(hook.PreToolUse, reason), `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"stopgate: fix it"}}`},
		{"codex context", Codex.Name, "", codexPostBash, hook.Context(hook.PostToolUse, reason), `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"stopgate: fix it"}}`},
		{"codex prompt context", Codex.Name, "", codexPromptInput, hook.Context(hook.UserPromptSubmit, reason), `{"hookSpecificOutput":{"hookEventName":"UserPromptSubmit","additionalContext":"stopgate: fix it"}}`},

		{"copilot block", Copilot.Name, "agentStop", copilotAgentStop, hook.Block(reason), `{"decision":"block","reason":"stopgate: fix it"}`},
		{"copilot subagent block", Copilot.Name, "subagentStop", copilotSubagentStop, hook.Block(reason), `{"decision":"block","reason":"stopgate: fix it"}`},
		// Copilot CLI drops continue/stopReason: a halt is a block it acts on.
		{"copilot halt", Copilot.Name, "agentStop", copilotAgentStop, hook.Halt(reason), `{"decision":"block","reason":"stopgate halted this session, and this client does not show the user why: stop working now, and tell the user, word for word: stopgate: fix it"}`},
		{"copilot subagent halt", Copilot.Name, "subagentStop", copilotSubagentStop, hook.Halt(reason), `{"decision":"block","reason":"stopgate halted this session, and this client does not show the user why: stop working now, and tell the user, word for word: stopgate: fix it"}`},
		{"copilot Claude-shaped halt", Copilot.Name, "", copilotClaudeRead, hook.Halt(reason), `{"decision":"block","reason":"stopgate halted this session, and this client does not show the user why: stop working now, and tell the user, word for word: stopgate: fix it"}`},
		{"copilot deny", Copilot.Name, "preToolUse", copilotPreCreate, hook.Deny(hook.PreToolUse, reason), `{"permissionDecision":"deny","permissionDecisionReason":"stopgate: fix it"}`},
		{"copilot context", Copilot.Name, "postToolUse", copilotPostView, hook.Context(hook.PostToolUse, reason), `{"additionalContext":"stopgate: fix it"}`},
		{"copilot prompt block", Copilot.Name, "userPromptSubmitted", copilotPrompt, hook.Block(reason), `{"decision":"block","reason":"stopgate: fix it"}`},
		{"copilot system message alone", Copilot.Name, "agentStop", copilotAgentStop, hook.Output{SystemMessage: "x"}, ``},
		{"copilot Claude-shaped", Copilot.Name, "", copilotClaudeRead, hook.Context(hook.PostToolUse, reason), `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"stopgate: fix it"}}`},

		// VS Code reads a stop's block at the top (toolCallingLoop.ts), and
		// is documented to in hookSpecificOutput (hooks-reference): both.
		{"vscode block", "", "", vscodeStopIn, hook.Block(reason), `{"decision":"block","reason":"stopgate: fix it","hookSpecificOutput":{"hookEventName":"Stop","decision":"block","reason":"stopgate: fix it"}}`},
		{"vscode block through Copilot's file", Copilot.Name, "agentStop", vscodeStopIn, hook.Block(reason), `{"decision":"block","reason":"stopgate: fix it","hookSpecificOutput":{"hookEventName":"Stop","decision":"block","reason":"stopgate: fix it"}}`},
		{"vscode subagent block", "", "", vscodeSubagent, hook.Block(reason), `{"decision":"block","reason":"stopgate: fix it","hookSpecificOutput":{"hookEventName":"SubagentStop","decision":"block","reason":"stopgate: fix it"}}`},
		{"vscode halt", Copilot.Name, "agentStop", vscodeStopIn, hook.Halt(reason), `{"continue":false,"stopReason":"stopgate: fix it"}`},
		{"vscode deny", Copilot.Name, "preToolUse", vscodeCreate, hook.Deny(hook.PreToolUse, reason), `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"stopgate: fix it"}}`},
		{"vscode context", "", "", vscodeRead, hook.Context(hook.PostToolUse, reason), `{"hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"stopgate: fix it"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Parse([]byte(tt.in), Options{Client: tt.client, Event: tt.event}, allEvents...)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := hook.AnswerTo(&buf, in).Write(tt.out); err != nil {
				t.Fatal(err)
			}
			got := strings.TrimSuffix(buf.String(), "\n")
			if got != tt.want {
				t.Errorf("wrote %s\n want %s", got, tt.want)
			}
			if strings.HasPrefix(tt.name, "copilot Claude-shaped") {
				return // Claude.Name Code's own shapes: internal/schema checks them
			}
			if strings.HasPrefix(tt.name, "vscode") {
				return // no published schema: the documented shapes above are the contract
			}
			validate(t, filepath.Join(tt.client, in.ClientEvent+".input.schema.json"), tt.in)
			if got != "" {
				validate(t, filepath.Join(tt.client, in.ClientEvent+".output.schema.json"), got)
			}
		})
	}
}

// TestVSCodeRecognised: VS Code's input is told from every other client's
// that sends a timestamp or a sessionId, whichever registration runs it,
// and names its stop by the timestamp every registration gets.
func TestVSCodeRecognised(t *testing.T) {
	qwenStop := `{"session_id":"q","transcript_path":"/t","cwd":"/p","hook_event_name":"Stop","timestamp":"2026-11-28T20:17:34.818Z","permission_mode":"yolo","prompt_id":"q#0","stop_hook_active":false}`
	claudeRead := `{"session_id":"c","transcript_path":"/t","cwd":"/p","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/p/a.json"},"tool_response":{"file":{"content":"{\"timestamp\":\"x\",\"hookEventName\":\"Stop\"}"}}}`
	for _, tt := range []struct {
		name, in, client string
		sure             bool
	}{
		{"vscode", vscodeRead, VSCode.Name, true},
		{"vscode stop", vscodeStopIn, VSCode.Name, true},
		{"vscode documented camelCase", vscodeEditFiles, VSCode.Name, true},
		{"qwen: permission_mode", qwenStop, Claude.Name, false},
		{"gemini: its own events", geminiAfterTool, Gemini.Name, true},
		{"copilot native: a numeric timestamp", copilotAgentStop, Copilot.Name, true},
		{"claude: the marks inside a tool's result", claudeRead, Claude.Name, false},
		{"claude: the event key in another case", `{"session_id":"v","cwd":"/p","HOOK_EVENT_NAME":"Stop","timestamp":"2026-11-28T21:00:10.000Z"}`, Claude.Name, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if c, sure := Recognise([]byte(tt.in), nil); c != tt.client || sure != tt.sure {
				t.Errorf("Recognise = %s, %v; want %s, %v", c, sure, tt.client, tt.sure)
			}
		})
	}
	for _, opt := range []Options{{}, {Client: Copilot.Name, Event: "agentStop"}} {
		in, err := Parse([]byte(vscodeStopIn), opt, allEvents...)
		if err != nil || in.StopID != "2026-11-28T21:00:10.000Z" {
			t.Errorf("%+v: StopID %q, %v", opt, in.StopID, err)
		}
	}
	if in, err := Parse([]byte(vscodeRead), Options{}, allEvents...); err != nil || in.StopID != "" {
		t.Errorf("a tool call has no StopID: %q, %v", in.StopID, err)
	}
}

// TestCopilotSchemaRefusesHalt: Copilot CLI's stop answers take no halt
// fields (it records such an answer as {}), so the schema refuses them.
func TestCopilotSchemaRefusesHalt(t *testing.T) {
	compiledMu.Lock()
	defer compiledMu.Unlock()
	for _, ev := range []string{"agentStop", "subagentStop"} {
		sch, err := compiler.Compile(must(filepath.Abs(filepath.Join("..", "..", "testdata", "schema", "copilot", ev+".output.schema.json"))))
		if err != nil {
			t.Fatal(err)
		}
		v, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"continue":false,"stopReason":"x"}`))
		if sch.Validate(v) == nil {
			t.Errorf("%s: a halt is valid", ev)
		}
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

var (
	compiler   = jsonschema.NewCompiler()
	compiledMu sync.Mutex
)

// validate checks doc against the schema file under testdata/schema.
func validate(t *testing.T, name, doc string) {
	t.Helper()
	compiledMu.Lock()
	defer compiledMu.Unlock()
	path, err := filepath.Abs(filepath.Join("..", "..", "testdata", "schema", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no schema: %v", err)
	}
	sch, err := compiler.Compile(path)
	if err != nil {
		t.Fatalf("schema %s: %v", name, err)
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s is not valid against %s: %v", doc, name, err)
	}
}
