// Package hook reads Claude Code hook input and writes hook output: unknown input fields are ignored, but
// a field stopgate reads must have the right JSON type, and the event must be one stopgate handles.
package hook

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/stopgate/stopgate/internal/cli"
)

// Hook event names, exactly as the client spells them.
const (
	PreToolUse           = "PreToolUse"
	PreSkillShellCommand = "PreSkillShellCommand" // a skill's inline shell command: PreToolUse's fields, command_name the skill
	PostToolUse          = "PostToolUse"
	UserPromptSubmit     = "UserPromptSubmit"
	UserPromptExpansion  = "UserPromptExpansion"
	Stop                 = "Stop"
	SubagentStop         = "SubagentStop"
	ConfigChange         = "ConfigChange"
)

// MaxInput bounds what Decode reads: far above any real input.
const MaxInput = 64 << 20

// Input is the JSON object a hook receives on stdin.
type Input struct {
	SessionID      string `json:"session_id"`
	TranscriptPath string `json:"transcript_path"`
	Cwd            string `json:"cwd"`
	HookEventName  string `json:"hook_event_name"`

	AgentID             string `json:"agent_id"` // "": the main thread
	AgentType           string `json:"agent_type"`
	AgentTranscriptPath string `json:"agent_transcript_path"`

	ToolName  string          `json:"tool_name"` // PreToolUse and PostToolUse
	ToolInput json.RawMessage `json:"tool_input"`
	ToolUseID string          `json:"tool_use_id"`
	Tool      ToolInput       `json:"-"` // the part of ToolInput stopgate reads

	Prompt        string `json:"prompt"` // UserPromptSubmit and UserPromptExpansion
	ExpansionType string `json:"expansion_type"`
	CommandName   string `json:"command_name"`
	InvokedBy     string `json:"invoked_by"` // PreSkillShellCommand's: claude, user, other

	Source               string `json:"source"`           // ConfigChange: which settings changed
	ChangedFile          string `json:"file_path"`        // and the file
	StopHookActive       bool   `json:"stop_hook_active"` // Stop and SubagentStop
	LastAssistantMessage string `json:"last_assistant_message"`

	Client      *Dialect `json:"-"` // decoded the input and encodes its answers; nil: Claude Code
	ClientEvent string   `json:"-"` // the event as the client named it
	StopID      string   `json:"-"` // names one stop every registration runs for (VS Code): judged once; "": none
	Reads       []string `json:"-"` // files read, absolute, when the client's tool is none of Claude Code's
	Calls       []Call   `json:"-"` // its writes as Claude Code tool calls, likewise
}

// Call is one tool call in Claude Code's shape.
type Call struct {
	Tool  string
	Input ToolInput
	Cwd   string // where the call runs when not the input's cwd
}

// Parse decodes one hook input object and checks it (Check).
func Parse(data []byte, events ...string) (*Input, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, errors.New("no hook input on stdin (expected one JSON object)")
	}
	// The client writes UTF-8; decoding would silently replace bad bytes.
	if !utf8.Valid(trimmed) {
		return nil, fmt.Errorf("hook input is not valid UTF-8 (bad byte at offset %d), want one JSON object in UTF-8", badUTF8(data))
	}
	if trimmed[0] != '{' {
		return nil, fmt.Errorf("hook input is %s, want one JSON object", describe(trimmed))
	}
	in, err := Unmarshal(trimmed)
	if err == nil {
		err = in.Check(events...)
	}
	if err != nil {
		return nil, err
	}
	return in, nil
}

// Unmarshal decodes a Claude-shaped input, type-checking the fields stopgate reads, not its event.
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

// decode unmarshals data into v; a wrong type is named under parent.
func decode(data []byte, v any, parent, bad string) error {
	err := json.Unmarshal(data, v)
	var te *json.UnmarshalTypeError
	switch {
	case err == nil:
		return nil
	case !errors.As(err, &te):
		return fmt.Errorf("%s: %w", bad, err)
	case te.Value == "bool": // in JSON's words, not Go's
		te.Value = "boolean"
	}
	return fmt.Errorf("hook input field %q is a JSON %s, want %s", strings.Trim(parent+"."+te.Field, "."), te.Value, cmp.Or(jsonKinds[te.Type.Kind()], "a number"))
}

// Check says whether in names a session and an event of events (any if none).
func (in *Input) Check(events ...string) error {
	if in.HookEventName == "" {
		return errors.New("hook input has no hook_event_name")
	}
	if len(events) > 0 && !slices.Contains(events, in.HookEventName) {
		if in.Client != nil {
			return fmt.Errorf("unsupported %s hook event %q: this hook handles %s (check how it is registered: gate check)", in.Client.Name, in.ClientEvent, strings.Join(events, ", "))
		}
		return fmt.Errorf("unsupported hook event %q: this hook handles %s (check how it is registered in .claude/settings.json)", in.HookEventName, strings.Join(events, ", "))
	}
	if in.SessionID == "" {
		return errors.New("hook input has no session_id")
	}
	return nil
}

// ReadPaths returns the files the tool call read.
func (in *Input) ReadPaths() []string {
	if in.Reads != nil {
		return in.Reads
	}
	if in.ToolName == "Read" && in.Tool.FilePath != "" {
		return []string{in.Tool.FilePath}
	}
	return nil
}

// GuardCalls returns the tool calls the guard judges for this input.
func (in *Input) GuardCalls() []Call {
	if in.Calls != nil {
		return in.Calls
	}
	return []Call{{Tool: in.ToolName, Input: in.Tool}}
}

// ToolInput holds the tool_input fields stopgate reads (the text written, for a client's .env: trust.DotEnvWrite).
type ToolInput struct {
	FilePath     string `json:"file_path"`
	NotebookPath string `json:"notebook_path"`
	Command      string `json:"command"`
	Skill        string `json:"skill"` // the Skill tool: a command the model runs itself
	Content      string `json:"content"`
	OldString    string `json:"old_string"`
	NewString    string `json:"new_string"`
}

// readsTool lists the tools whose input stopgate type-checks: no other tool's (an MCP tool's) can fail a hook.
var readsTool = map[string]bool{"Read": true, "Write": true, "Edit": true, "MultiEdit": true, "NotebookEdit": true, "Bash": true, "Skill": true}

// describe says what kind of JSON value, or non-JSON text, b starts with.
func describe(b []byte) string {
	if b[0] == '-' || b[0] >= '0' && b[0] <= '9' {
		return "a JSON number"
	}
	for _, k := range [][2]string{{"[", "a JSON array"}, {`"`, "a JSON string"}, {"true", "a JSON boolean"}, {"false", "a JSON boolean"}, {"null", "JSON null"}} {
		if bytes.HasPrefix(b, []byte(k[0])) {
			return k[1]
		}
	}
	r, _ := utf8.DecodeRune(b)
	return fmt.Sprintf("not JSON (it starts with %q)", string(r))
}

// jsonKinds name Go kinds in JSON's words; any other is a number.
var jsonKinds = map[reflect.Kind]string{reflect.String: "a string", reflect.Bool: "a boolean (true or false)",
	reflect.Slice: "an array", reflect.Array: "an array", reflect.Struct: "an object", reflect.Map: "an object"}

// badUTF8 returns the offset of the first byte of b that is not UTF-8.
func badUTF8(b []byte) int {
	for i, r := range string(b) {
		if r == utf8.RuneError && !bytes.HasPrefix(b[i:], []byte("\uFFFD")) {
			return i
		}
	}
	return -1
}

// SlashCommand returns the name of a prompt's first word /name, or "".
func SlashCommand(prompt string) string {
	word, ok := strings.CutPrefix(strings.TrimLeft(prompt, " \t\r\n"), "/")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(word, " \t\r\n"); i >= 0 {
		word = word[:i]
	}
	return word
}

// The hook programs, one per folder of cmd/: every list of them is this one.
const (
	Detect   = "detect"
	Gate     = "gate"
	Testhook = "testhook"
	Exporter = "gate-otel" // no hook's, but the gate runs it: protected as they are
)

// Programs are the hook programs.
var Programs = []string{Detect, Gate, Testhook}

// Handles are the events each program handles (testhook ignores SubagentStop: never a test run's answer).
var Handles = map[string][]string{
	Detect:   {PostToolUse, UserPromptExpansion, UserPromptSubmit, PreToolUse, PreSkillShellCommand},
	Gate:     {Stop, SubagentStop, ConfigChange},
	Testhook: {UserPromptSubmit, Stop, SubagentStop},
}

// Output is the JSON object a hook prints on stdout with exit 0: documented fields only.
type Output struct {
	Continue           *bool     `json:"continue,omitempty"`
	StopReason         string    `json:"stopReason,omitempty"`
	SuppressOutput     bool      `json:"suppressOutput,omitempty"`
	SystemMessage      string    `json:"systemMessage,omitempty"`
	Decision           string    `json:"decision,omitempty"` // "block": a stop goes on with Reason to the model; a prompt is dropped
	Reason             string    `json:"reason,omitempty"`
	HookSpecificOutput *Specific `json:"hookSpecificOutput,omitempty"`
}

// Specific is hookSpecificOutput. HookEventName must equal the event.
type Specific struct {
	HookEventName            string `json:"hookEventName"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
}

// BlockPrefix starts every blocked stop's reason (the record is searched for it).
const BlockPrefix = "stopgate: you may not stop yet"

// Block refuses a stop (the reason goes to the model) or a prompt (to the user).
func Block(reason string) Output { return Output{Decision: "block", Reason: reason} }

// Halt ends the whole session: the user sees reason, the model does not.
func Halt(reason string) Output { return Output{Continue: new(false), StopReason: reason} }

// HaltSaid is Halt with reason as the systemMessage too, which a headless claude -p log shows (it drops stopReason).
func HaltSaid(reason string) Output {
	o := Halt(reason)
	o.SystemMessage = reason
	return o
}

// Context adds text to the model's context after event.
func Context(event, text string) Output {
	return Output{HookSpecificOutput: &Specific{HookEventName: event, AdditionalContext: text}}
}

// Deny refuses the call of a permission event and tells the model why.
func Deny(event, reason string) Output {
	return Output{HookSpecificOutput: &Specific{HookEventName: event, PermissionDecision: "deny", PermissionDecisionReason: reason}}
}

// Dialect is a client other than Claude Code (package client): how it reads an answer.
type Dialect struct {
	Name   string                           // as gate init --client takes it
	Encode func(event string, o Output) any // the value the client reads on stdout (nil prints nothing); nil: o as is
	// Halt is a halt as the client acts on it: shown, or a block the model relays (HaltRelay); once: relayed a
	// single time, counted as a block. nil: Halt, which the client shows.
	Halt func(reason string, relayed bool) (o Output, once bool)
}

// Answer writes the answers to one hook input, in its client's shape.
type Answer struct {
	w      io.Writer
	client *Dialect // nil: Claude Code, the reference
	event  string   // the event as the client names it
}

// AnswerTo returns the writer of the answers to in (nil: Claude Code's) on w.
func AnswerTo(w io.Writer, in *Input) Answer {
	if in == nil {
		return Answer{w: w}
	}
	return Answer{w: w, client: in.Client, event: in.ClientEvent}
}

// Write prints o as one line of JSON in the client's shape, a halt as it acts on it, its texts Visible.
func (a Answer) Write(o Output) error {
	if o.Continue != nil && !*o.Continue {
		said := o.SystemMessage
		if o, _ = a.Halt(o.StopReason, true); a.client == nil {
			o.SystemMessage = said // HaltSaid: Claude Code prints it in print mode
		}
	}
	o.StopReason, o.SystemMessage, o.Reason = cli.Visible(o.StopReason, false), cli.Visible(o.SystemMessage, false), cli.Visible(o.Reason, false)
	if s := o.HookSpecificOutput; s != nil {
		o.HookSpecificOutput = &Specific{s.HookEventName, cli.Visible(s.AdditionalContext, false), s.PermissionDecision, cli.Visible(s.PermissionDecisionReason, false)}
	}
	var v any = o
	if a.client != nil && a.client.Encode != nil {
		if v = a.client.Encode(a.event, o); v == nil {
			return nil
		}
	}
	return json.NewEncoder(a.w).Encode(v) // one line, one write
}

// Halt is a halt with reason as the client acts on it (Dialect.Halt).
func (a Answer) Halt(reason string, relayed bool) (o Output, once bool) {
	if a.client == nil || a.client.Halt == nil {
		return Halt(reason), false
	}
	return a.client.Halt(reason, relayed)
}

// HaltRelay is a halt's reason as a block hands it to the model, for a client that cannot show it.
func HaltRelay(reason string) string {
	return RelayPrefix + ": stop working now, and tell the user, word for word: " + reason
}

// RelayPrefix starts every relayed halt, as the session's record shows it.
const RelayPrefix = "stopgate halted this session, and this client does not show the user why"
