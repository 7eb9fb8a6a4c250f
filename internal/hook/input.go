// Package hook reads Claude Code hook input and writes hook output.
//
// The shapes follow what the real client sends and accepts (see the project's
// notes on the client): unknown input fields are ignored because the client
// adds fields over time, but a field stopgate reads must have the right JSON
// type, and the event must be one stopgate handles.
package hook

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"
)

// Hook event names, exactly as the client spells them.
const (
	PreToolUse = "PreToolUse"
	// PreSkillShellCommand comes before a skill's or command's inline
	// shell command runs (Claude Code 2.1.332): PreToolUse's tool_name
	// and tool_input.command, with command_name naming the skill.
	PreSkillShellCommand = "PreSkillShellCommand"
	PostToolUse          = "PostToolUse"
	UserPromptSubmit     = "UserPromptSubmit"
	UserPromptExpansion  = "UserPromptExpansion"
	Stop                 = "Stop"
	SubagentStop         = "SubagentStop"
	ConfigChange         = "ConfigChange"
)

// MaxInput bounds what Decode reads. The largest real inputs are PostToolUse
// events carrying a whole file in tool_response; 64 MiB is far above them.
const MaxInput = 64 << 20

// Input is the JSON object a hook receives on stdin. Fields of other events
// are left empty.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`
	PermissionMode string `json:"permission_mode"`

	// AgentID is set only inside a subagent; empty means the main thread.
	AgentID             string `json:"agent_id"`
	AgentType           string `json:"agent_type"`
	AgentTranscriptPath string `json:"agent_transcript_path"`

	// PreToolUse and PostToolUse.
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
	// Tool is the part of ToolInput stopgate reads, type-checked by Parse.
	Tool ToolInput `json:"-"`

	// UserPromptSubmit and UserPromptExpansion.
	Prompt        string `json:"prompt"`
	ExpansionType string `json:"expansion_type"`
	CommandName   string `json:"command_name"`
	CommandArgs   string `json:"command_args"`
	CommandSource string `json:"command_source"`
	// InvokedBy is PreSkillShellCommand's: "claude" (the model ran the
	// skill), "user" or "other".
	InvokedBy string `json:"invoked_by"`

	// ConfigChange: which settings changed (user_settings,
	// project_settings, local_settings, policy_settings, skills), and the file.
	Source      string `json:"source"`
	ChangedFile string `json:"file_path"`

	// Stop and SubagentStop.
	StopHookActive       bool   `json:"stop_hook_active"`
	LastAssistantMessage string `json:"last_assistant_message"`

	// Client is the dialect that decoded the input and encodes the answers
	// to it (AnswerTo); nil is Claude Code, the reference dialect.
	Client Dialect `json:"-"`
	// ClientEvent is the event as the client named it, for messages.
	ClientEvent string `json:"-"`
	// StopID names one stop across the registrations that run for it (VS
	// Code runs the hooks of every file it reads for one stop, each with
	// the same input): the gate judges a stop of one id once. "": each run
	// is a stop of its own.
	StopID string `json:"-"`
	// Reads are the files a tool call read, absolute, when the client's
	// tool is not Read: a read of several files. A shell command's are
	// the guard's to find (guard.ShellReads).
	Reads []string `json:"-"`
	// Calls are the writes a tool call makes, as Claude Code tool calls the
	// guard judges, when the client's tool is not one of them.
	Calls []Call `json:"-"`
}

// Call is one tool call in Claude Code's shape: a tool name and the part
// of its input stopgate reads, decoded once (Unmarshal).
type Call struct {
	Tool  string
	Input ToolInput
	Cwd   string // where the call runs when not the input's cwd
}

// ErrNoInput is returned by Parse for empty or all-blank stdin.
var ErrNoInput = errors.New("no hook input on stdin (expected one JSON object)")

// Parse checks one hook input object, already read, and that it names an
// event from events (any event if events is empty) and a session.
func Parse(data []byte, events ...string) (*Input, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, ErrNoInput
	}
	// The client writes JSON with JSON.stringify, always UTF-8: anything
	// else is not from it, and decoding would silently replace bytes.
	if !utf8.Valid(trimmed) {
		return nil, fmt.Errorf("hook input is not valid UTF-8 (bad byte at offset %d), want one JSON object in UTF-8", badUTF8(data))
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("hook input is %s, want one JSON object", describe(trimmed))
	}
	in, err := Unmarshal(trimmed)
	if err != nil {
		return nil, err
	}
	if err := in.Check(events...); err != nil {
		return nil, err
	}
	return in, nil
}

// Unmarshal decodes a Claude-shaped input object (trimmed JSON), type-checking the fields
// stopgate reads, without judging its event.
func Unmarshal(trimmed []byte) (*Input, error) {
	var in Input
	if err := decode(trimmed, &in, "", "hook input is not valid JSON"); err != nil {
		return nil, err
	}
	if readsTool[in.ToolName] && len(in.ToolInput) > 0 && string(in.ToolInput) != "null" {
		if err := decode(in.ToolInput, &in.Tool, "tool_input", `hook input field "tool_input" is not a JSON object`); err != nil {
			return nil, err
		}
	}
	return &in, nil
}

// decode unmarshals data into v, a field of the wrong type named under
// parent in JSON's words (typeError), any other error after bad.
func decode(data []byte, v any, parent, bad string) error {
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return typeError(parent, te)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", bad, err)
	}
	return nil
}

// Check says whether in names an event from events (any event if events
// is empty) and a session.
func (in *Input) Check(events ...string) error {
	if in.HookEventName == "" {
		return errors.New("hook input has no hook_event_name")
	}
	if len(events) > 0 && !slices.Contains(events, in.HookEventName) {
		if in.Client != nil {
			return fmt.Errorf("unsupported %s hook event %q: this hook handles %s (check how it is registered: gate check)", in.Client.Name(), in.ClientEvent, strings.Join(events, ", "))
		}
		return fmt.Errorf("unsupported hook event %q: this hook handles %s (check how it is registered in .claude/settings.json)", in.HookEventName, strings.Join(events, ", "))
	}
	if in.SessionID == "" {
		return errors.New("hook input has no session_id")
	}
	return nil
}

// ReadPaths returns the files the tool call read: Read's file_path, or
// what the client's dialect found.
func (in *Input) ReadPaths() []string {
	if in.Reads != nil {
		return in.Reads
	}
	if in.ToolName == "Read" && in.Tool.FilePath != "" {
		return []string{in.Tool.FilePath}
	}
	return nil
}

// GuardCalls returns the tool calls the guard judges for this input: the
// call itself, or the writes the client's dialect found in it.
func (in *Input) GuardCalls() []Call {
	if in.Calls != nil {
		return in.Calls
	}
	return []Call{{Tool: in.ToolName, Input: in.Tool}}
}

// ToolInput holds the tool_input fields stopgate reads: the path of Read,
// Write, Edit and MultiEdit, NotebookEdit's path, Bash's command, the
// command the Skill tool runs, and what Write and Edit put in the file
// (the guard reads it for a client's .env: trust.DotEnvWrite).
type ToolInput struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Command      string `json:"command"`
	Skill        string `json:"skill"` // the Skill tool: a command the model runs itself
	Content      string `json:"content"`
	OldString    string `json:"old_string"`
	NewString    string `json:"new_string"`
}

// readsTool lists the tools whose input stopgate reads; other tools' inputs
// (MCP tools included) are never type-checked, so they can never make a
// hook fail.
var readsTool = map[string]bool{"Read": true, "Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true, "Bash": true, "Skill": true}

// FilePath returns tool_input.file_path, or "" when the tool input has none.
func (in *Input) FilePath() string { return in.Tool.FilePath }

// describe says what kind of JSON value, or non-JSON text, b starts with.
func describe(b []byte) string {
	switch c := b[0]; {
	case c == '[':
		return "a JSON array"
	case c == '"':
		return "a JSON string"
	case c == '-' || c >= '0' && c <= '9':
		return "a JSON number"
	case bytes.HasPrefix(b, []byte("true")) || bytes.HasPrefix(b, []byte("false")):
		return "a JSON boolean"
	case bytes.HasPrefix(b, []byte("null")):
		return "JSON null"
	}
	r, _ := utf8.DecodeRune(b)
	return fmt.Sprintf("not JSON (it starts with %q)", string(r))
}

// typeError names a field of the wrong JSON type in JSON's words, not Go's.
func typeError(parent string, te *json.UnmarshalTypeError) error {
	field := te.Field
	if parent != "" {
		field = strings.TrimSuffix(parent+"."+field, ".")
	}
	got := te.Value
	if got == "bool" {
		got = "boolean"
	}
	return fmt.Errorf("hook input field %q is a JSON %s, want %s", field, got, jsonKind(te.Type))
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean (true or false)"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "a number"
}

// badUTF8 returns the offset of the first byte of b that is not UTF-8.
func badUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return -1
}

// SlashCommand returns the command name of a prompt whose first word is
// /name, or "": what UserPromptSubmit carries when the user types a slash
// command.
func SlashCommand(prompt string) string {
	prompt = strings.TrimLeft(prompt, " \t\r\n")
	if !strings.HasPrefix(prompt, "/") {
		return ""
	}
	word := prompt[1:]
	if i := strings.IndexAny(word, " \t\r\n"); i >= 0 {
		word = word[:i]
	}
	return word
}
