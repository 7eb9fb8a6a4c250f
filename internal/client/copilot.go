package client

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/transcript"
)

// Copilot is GitHub Copilot CLI, in either of its hook file formats. The
// native one (.github/hooks/*.json with "version":1) sends camelCase
// payloads that do not name their event, so the registration passes it
// (--event); the Claude-shaped one sends Claude Code's snake_case fields
// and event names, with its own tool names and "path" for a file.
//
// Copilot ignores exit code 2: only the JSON answer blocks. A native
// answer has its own fields for a tool call refused and for context.
var Copilot = &Client{
	Name: copilotAnswers{}.Name(), Title: "Copilot CLI",
	HookFile: ".github/hooks/stopgate.json",
	Settings: []string{".github/copilot/settings.json", ".github/copilot/settings.local.json"}, // disableAllHooks, disabledHooks
	Hooks: []Hook{
		{"postToolUse", "", hook.Detect, 10},
		{"userPromptSubmitted", "", hook.Detect, 10},
		{"preToolUse", "", hook.Detect, 10},
		{"agentStop", "", hook.Gate, 600},
		{"subagentStop", "", hook.Gate, 600},
		{"userPromptSubmitted", "", hook.Testhook, 10},
		{"agentStop", "", hook.Testhook, 600},
	},
	Timeout:    30 * time.Second,
	ProjectVar: "COPILOT_PROJECT_DIR",
	Unit:       1,
	EventFlag:  true,
	BlockCap:   8,
	WallLeft:   "no wall gate init can turn on: Copilot CLI's command sandbox (MXC, bubblewrap plus slirp4netns on Linux) is switched on and given its paths in the user's own settings or with --sandbox, not in the project; the guard alone refuses a write to the protected set",
	Trust:      "Copilot CLI runs a repository's hooks only in a trusted folder: trust it when Copilot asks (copilot -p needs --trust-folder)",
	Limits: []string{
		"Copilot CLI lets the agent stop after 8 consecutive blocks: keep max_blocks below 8",
		"Copilot CLI ignores exit code 2: stopgate answers with JSON only",
		"a subagent's agentStop (it has parentAgentId) is not answered: Copilot ignores a block there; the subagent is gated at subagentStop",
	},
	events:  copilotEvent,
	answers: copilotAnswers{native: true},
	decode:  decodeCopilot,
	where: func(in *hook.Input, agent string) (string, transcript.Thread) {
		return in.TranscriptPath, transcript.Thread{Agent: agent}
	},
	lines:  lines[copilotLine](nil, `"tool.execution_start"`, `"hook.end"`, `"user.message"`),
	format: copilotFormat,
}

// copilotAnswers writes Copilot's answers: native, or in the Claude-shaped
// file's shape. Copilot CLI drops continue:false and stopReason, so a halt
// would pass the stop unseen: it is relayed, until Copilot's own cap (8
// blocks).
type copilotAnswers struct {
	native bool
	relaysHalt
}

func (copilotAnswers) Name() string { return "copilot" }

// copilotEvent maps the native events to stopgate's.
var copilotEvent = map[string]string{
	"agentStop":           hook.Stop,
	"subagentStop":        hook.SubagentStop,
	"postToolUse":         hook.PostToolUse,
	"preToolUse":          hook.PreToolUse,
	"userPromptSubmitted": hook.UserPromptSubmit,
}

// copilotOutput is the native answer: decision/reason for agentStop,
// subagentStop and userPromptSubmitted, permissionDecision for preToolUse,
// additionalContext for postToolUse and userPromptSubmitted. Copilot CLI
// has no halt (its SDK types allow no continue or stopReason, and its
// events.jsonl records such an answer as {}): see Halt.
type copilotOutput struct {
	Decision                 string `json:"decision,omitempty"`
	Reason                   string `json:"reason,omitempty"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
}

func (c copilotAnswers) Encode(_ string, o hook.Output) any {
	if !c.native {
		return o // the Claude-shaped file takes Claude Code's answers
	}
	out := copilotOutput{Decision: o.Decision, Reason: o.Reason}
	if s := o.HookSpecificOutput; s != nil {
		out.PermissionDecision, out.PermissionDecisionReason = s.PermissionDecision, s.PermissionDecisionReason
		out.AdditionalContext = s.AdditionalContext
	}
	if out == (copilotOutput{}) {
		return nil // a systemMessage alone: the native format has no field for it
	}
	return out
}

func decodeCopilot(data []byte, event string) (*hook.Input, error) {
	m, err := object(data, "toolResult", "tool_result", "tool_response")
	if err != nil {
		return nil, err
	}
	native := str(m, "hook_event_name") == ""
	if native {
		if event == "" {
			event = copilotInfer(m)
		}
		if str(m, "parentAgentId") != "" && event == "agentStop" {
			return nil, ErrIgnored
		}
		if e, ok := copilotEvent[event]; ok {
			m["hook_event_name"] = e
		} else {
			m["hook_event_name"] = event
		}
		for from, to := range map[string]string{
			"sessionId": "session_id", "transcriptPath": "transcript_path", "toolName": "tool_name",
			"toolArgs": "tool_input", "agentId": "agent_id", "agentType": "agent_type",
			"response": "last_assistant_message", "workingDirectory": "cwd",
		} {
			rename(m, from, to)
		}
		// A subagent's own hooks (its tools, its prompt) carry its session,
		// whose id is its agentId; its subagentStop carries the parent's
		// session, parentAgentId. Scope the child's hooks like that stop.
		if child := str(m, "agent_id"); child != "" && str(m, "session_id") == child && str(m, "parentAgentId") != "" {
			m["session_id"] = str(m, "parentAgentId")
		}
		if s, ok := m["tool_input"].(string); ok {
			var v any // toolArgs may come as JSON text
			if json.Unmarshal([]byte(s), &v) == nil {
				m["tool_input"] = v
			}
		}
	} else {
		event = str(m, "hook_event_name")
	}
	calls := copilotTool(m)
	in, err := claudeShaped(m)
	if err != nil {
		return nil, err
	}
	in.Client, in.ClientEvent, in.Calls = copilotAnswers{native: native}, event, calls
	return in, nil
}

// copilotInfer names the native event of a payload registered without
// --event, from the fields only that event has.
func copilotInfer(m map[string]any) string {
	_, tool := m["toolName"]
	_, result := m["toolResult"]
	_, prompt := m["prompt"]
	_, response := m["response"]
	switch {
	case tool && result:
		return "postToolUse"
	case tool:
		return "preToolUse"
	case prompt:
		return "userPromptSubmitted"
	case response:
		return "subagentStop"
	}
	return "agentStop"
}

// copilotTool rewrites Copilot's tool (native or Claude-shaped) as the
// Claude Code tool stopgate judges, its "path" as file_path. apply_patch
// returns a guard call per file its patch writes.
func copilotTool(m map[string]any) []hook.Call {
	args, _ := m["tool_input"].(map[string]any)
	if p, ok := args["path"]; ok {
		if _, has := args["file_path"]; !has {
			args["file_path"] = p
		}
	}
	switch name := str(m, "tool_name"); name {
	case "view":
		m["tool_name"] = "Read"
	case "create":
		m["tool_name"] = "Write"
	case "edit", "str_replace_editor":
		m["tool_name"] = "Edit"
		if c, _ := args["command"].(string); c == "view" {
			m["tool_name"] = "Read"
		}
		delete(args, "command") // str_replace_editor's, not a shell command
	case "bash":
		m["tool_name"] = "Bash"
	case "apply_patch":
		patch, _ := m["tool_input"].(string)
		for _, k := range []string{"input", "patch", "command"} {
			if s, ok := args[k].(string); ok && patch == "" {
				patch = s
			}
		}
		m["tool_input"] = map[string]any{}
		return writes(PatchFiles(patch))
	}
	return nil
}

// Copilot CLI records a session in events.jsonl
// (~/.copilot/session-state/<id>/), a subagent's lines in it with their
// agentId, and every hook's input and output:
//
//	{"type":"tool.execution_start","data":{"toolName":"view","arguments":{"path":…}}}
//	{"type":"hook.end","data":{"hookType":"agentStop","output":{"decision":"block","reason":…}}}
//	{"type":"user.message","data":{"content":"what a person typed"}}
type copilotLine struct {
	stamp
	Type    string `json:"type"`
	AgentID string `json:"agentId"`
	Data    struct {
		ToolName  string          `json:"toolName"`
		Arguments json.RawMessage `json:"arguments"`
		Content   json.RawMessage `json:"content"`
		HookType  string          `json:"hookType"`
		Output    struct {
			Decision string `json:"decision"`
			Reason   string `json:"reason"`
		} `json:"output"`
	} `json:"data"`
}

func (l *copilotLine) agent() string { return l.AgentID }

func (l *copilotLine) reads(cwd string, sh Shell) []string {
	if l.Type != "tool.execution_start" {
		return nil
	}
	a := args(l.Data.Arguments)
	switch l.Data.ToolName {
	case "view":
	case "str_replace_editor", "edit":
		if c, _ := a["command"].(string); c != "view" {
			return nil
		}
	case "bash":
		cmd, _ := a["command"].(string)
		return sh(cmd, cwd)
	default:
		return nil
	}
	p, _ := a["path"].(string)
	if p = abs(p, cwd); p != "" {
		return []string{p}
	}
	return nil
}

func (l *copilotLine) command() string {
	if l.Type != "tool.execution_start" || l.Data.ToolName != "skill" {
		return ""
	}
	name, _ := args(l.Data.Arguments)["skill"].(string)
	return name
}

func (l *copilotLine) typed() (string, bool) {
	if l.Type != "user.message" {
		return "", false
	}
	var s string
	json.Unmarshal(l.Data.Content, &s)
	// A fed-back block is a user message too: its hook.end counts it.
	return s, s != "" && !fedBack(s)
}

func (l *copilotLine) block() (string, string, bool) {
	if l.Type != "hook.end" || l.Data.Output.Decision != "block" {
		return "", "", false
	}
	event, ok := copilotEvent[l.Data.HookType]
	if !ok || (event != hook.Stop && event != hook.SubagentStop) {
		return "", "", false
	}
	return l.Data.Output.Reason, event, true
}

// Copilot CLI's native hook file, .github/hooks/*.json:
//
//	{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "…", "timeoutSec": 600}]}}
//
// Each event lists commands directly; there are no matchers. stopgate
// writes its own file, stopgate.json, so it never edits a person's hook
// file; entries a person adds to it are kept when hooks are added.

// copilotFile is the native file's shape, as far as stopgate reads it;
// Cursor's hooks.json has the same.
type copilotFile struct {
	Version int                          `json:"version"`
	Hooks   map[string][]json.RawMessage `json:"hooks"`
}

// copilotCommand is one command entry: Copilot's (bash, timeoutSec) or
// Cursor's (command, timeout, loop_limit).
type copilotCommand struct {
	Type       string `json:"type"`
	Bash       string `json:"bash,omitempty"`
	TimeoutSec int    `json:"timeoutSec,omitempty"`
	Command    string `json:"command,omitempty"`
	Timeout    int    `json:"timeout,omitempty"`
	LoopLimit  int    `json:"loop_limit,omitempty"`
}

// run is the entry's command line, in either client's key.
func (c copilotCommand) run() string { return cmp.Or(c.Bash, c.Command) }

// parse decodes a hook file, or says where it is broken.
func (v versionedFormat) parse(data []byte) (*copilotFile, error) {
	var f copilotFile
	if err := json.Unmarshal(data, &f); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, settings.ErrorAt(data, max(int(se.Offset)-1, 0), "%s", se.Error()) // Offset is past the bad byte
		case errors.As(err, &te):
			return nil, settings.ErrorAt(data, int(te.Offset), "%s is a JSON %s, not what %s reads", te.Field, te.Value, v.title)
		}
		return nil, err
	}
	return &f, nil
}

// lookup reports, for each wanted hook, whether the file runs its
// program for its event.
func (f *copilotFile) registered(want []settings.Hook) []settings.Found {
	out := make([]settings.Found, len(want))
	for i, h := range want {
		out[i] = settings.Found{Hook: h}
		for _, raw := range f.Hooks[h.Event] {
			var c copilotCommand
			if json.Unmarshal(raw, &c) != nil || c.run() == "" {
				continue
			}
			if settings.Program(c.run()) == settings.Program(h.Command) {
				out[i].Registered, out[i].Command, out[i].Timeout = true, c.run(), cmp.Or(c.TimeoutSec, c.Timeout)
				break
			}
		}
	}
	return out
}

// versionedFormat is a {"version": 1, "hooks": {event: [command, …]}}
// file's format (hookFormat): Copilot CLI's native file, Cursor's.
type versionedFormat struct {
	title  string                             // the client, as errors name it
	events []string                           // in the client's documented order
	entry  func(settings.Hook) copilotCommand // the entry gate init writes
}

// copilotFormat is Copilot CLI's native file.
var copilotFormat = versionedFormat{title: "Copilot CLI", events: copilotEvents, entry: func(h settings.Hook) copilotCommand {
	return copilotCommand{Type: "command", Bash: h.Command, TimeoutSec: h.Timeout}
}}

func (versionedFormat) empty() []byte { return []byte(`{"version": 1}`) }

func (v versionedFormat) lookup(data []byte, want []settings.Hook) ([]settings.Found, error) {
	f, err := v.parse(data)
	if err != nil {
		return nil, err
	}
	return f.registered(want), nil
}

// merge adds the wanted hooks that data does not register yet, as
// settings.Merge does in Claude Code's shape. It returns the hooks it
// added; none means data is returned unchanged.
func (v versionedFormat) merge(data []byte, want []settings.Hook) ([]byte, []settings.Hook, error) {
	f, err := v.parse(data)
	if err != nil {
		return nil, nil, err
	}
	if f.Hooks == nil {
		f.Hooks = map[string][]json.RawMessage{}
	}
	var added []settings.Hook
	for i, fd := range f.registered(want) {
		if fd.Registered {
			continue
		}
		h := want[i]
		// Not Marshal: it would write the launcher's && as \u0026\u0026.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(v.entry(h))
		raw := json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		f.Hooks[h.Event] = append(f.Hooks[h.Event], raw)
		added = append(added, h)
	}
	if len(added) == 0 {
		return data, nil, nil
	}
	return v.render(f), added, nil
}

// copilotEvents are the events in the order Copilot CLI documents them.
var copilotEvents = []string{"sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "agentStop", "subagentStop", "sessionEnd"}

// render writes the file with one command per line, events in the
// client's documented order, then any others by name.
func (v versionedFormat) render(f *copilotFile) []byte {
	rank := func(e string) int {
		if i := slices.Index(v.events, e); i >= 0 {
			return i
		}
		return len(v.events)
	}
	events := slices.SortedFunc(maps.Keys(f.Hooks), func(a, b string) int {
		return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
	})
	lists := make([]string, len(events))
	for i, e := range events {
		cmds := make([]string, len(f.Hooks[e]))
		for j, raw := range f.Hooks[e] {
			var c bytes.Buffer
			json.Compact(&c, raw)
			cmds[j] = "\n      " + c.String()
		}
		key, _ := json.Marshal(e)
		lists[i] = fmt.Sprintf("\n    %s: [%s\n    ]", key, strings.Join(cmds, ","))
	}
	return fmt.Appendf(nil, "{\n  \"version\": %d,\n  \"hooks\": {%s\n  }\n}\n", f.Version, strings.Join(lists, ","))
}

// remove is merge's inverse: it takes out each command that
// is still exactly one of want (type, command and timeout, nothing else),
// drops an event it leaves empty, and names in Left a command that runs
// one of programs but was changed since. empty says no hook is left.
func (v versionedFormat) remove(data []byte, want []settings.Hook, programs []string) (out []byte, r settings.Removal, empty bool, err error) {
	f, err := v.parse(data)
	if err != nil {
		return nil, r, false, err
	}
	for e, list := range f.Hooks {
		var keep []json.RawMessage
		for _, raw := range list {
			if h, ok := v.own(raw, e, want); ok {
				r.Removed = append(r.Removed, h.String())
				continue
			}
			var c copilotCommand
			if json.Unmarshal(raw, &c) == nil && c.run() != "" && slices.Contains(programs, settings.Program(c.run())) {
				r.Left = append(r.Left, fmt.Sprintf("hooks.%s: runs %s, but is not as gate init wrote it", e, settings.Program(c.run())))
			}
			keep = append(keep, raw)
		}
		if len(keep) == 0 {
			delete(f.Hooks, e)
		} else {
			f.Hooks[e] = keep
		}
	}
	slices.Sort(r.Removed)
	slices.Sort(r.Left)
	if len(r.Removed) == 0 {
		return data, r, false, nil
	}
	return v.render(f), r, len(f.Hooks) == 0, nil
}

// own reports whether raw is a command gate init wrote for event.
func (v versionedFormat) own(raw json.RawMessage, event string, want []settings.Hook) (settings.Hook, bool) {
	var c copilotCommand
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if dec.Decode(&c) != nil || c.Type != "command" {
		return settings.Hook{}, false
	}
	for _, h := range want {
		e := v.entry(h)
		e.Bash, e.Command = c.Bash, c.Command
		if h.Event == event && settings.SameRun(h.Command, c.run()) && c == e {
			return h, true
		}
	}
	return settings.Hook{}, false
}
