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
	"unicode"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
)

// Copilot is GitHub Copilot CLI: its native file's camelCase payloads do not name their event (init passes --event);
// the Claude-shaped one's have Copilot's tools. Only JSON blocks.
var Copilot = &Client{
	Name: "copilot", Title: "Copilot CLI",
	HookFile:   ".github/hooks/stopgate.json",
	Settings:   []string{".github/copilot/settings.json", ".github/copilot/settings.local.json"}, // disableAllHooks, disabledHooks
	Hooks:      ownHooks(claudeHooks("", ""), copilotEvent),
	Timeout:    30 * time.Second,
	ProjectVar: "COPILOT_PROJECT_DIR",
	EventFlag:  true,
	BlockCap:   8,
	WallLeft:   "no wall gate init can turn on: Copilot CLI's command sandbox (MXC, bubblewrap plus slirp4netns on Linux) is switched on and given its paths in the user's own settings or with --sandbox, not in the project; the guard alone refuses a write to the protected set",
	Trust:      "Copilot CLI runs a repository's hooks only in a trusted folder: trust it when Copilot asks (copilot -p needs --trust-folder)",
	Limits: []string{
		"Copilot CLI lets the agent stop after 8 consecutive blocks: keep max_blocks below 8",
		"Copilot CLI ignores exit code 2: stopgate answers with JSON only",
		"a subagent's agentStop (it has parentAgentId) is not answered: Copilot ignores a block there; the subagent is gated at subagentStop",
	},
	events: copilotEvent,
	encode: copilotEncode,
	halt:   relayHalt, // Copilot CLI drops continue:false and stopReason
	input: &shape{drop: []string{"toolResult", "tool_result", "tool_response"}, file: "path", fix: copilotFix,
		tools: map[string]string{"view": "Read", "create": "Write", "edit": "Edit", "str_replace_editor": "Edit", "bash": "Bash"}},
	threads: oneFile,
	lines:   lineOf(copilotShow, `"tool.execution_start"`, `"hook.end"`, `"user.message"`),
	format: &versionedFormat{title: "Copilot CLI", entry: func(h settings.Hook) hookEntry {
		return hookEntry{Type: "command", Bash: h.Command, TimeoutSec: h.Timeout}
	}, events: []string{"sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "agentStop", "subagentStop", "sessionEnd"}},
}

var copilotEvent = map[string]string{"agentStop": hook.Stop, "subagentStop": hook.SubagentStop,
	"postToolUse": hook.PostToolUse, "preToolUse": hook.PreToolUse, "userPromptSubmitted": hook.UserPromptSubmit}

// copilotOutput is the native answer; it has no halt (Copilot records one as {}).
type copilotOutput struct {
	Decision                 string `json:"decision,omitempty"`
	Reason                   string `json:"reason,omitempty"`
	PermissionDecision       string `json:"permissionDecision,omitempty"`
	PermissionDecisionReason string `json:"permissionDecisionReason,omitempty"`
	AdditionalContext        string `json:"additionalContext,omitempty"`
}

func copilotEncode(event string, o hook.Output) any {
	if event != "" && unicode.IsUpper(rune(event[0])) {
		return o // the Claude-shaped file's events are capitalised: it takes Claude Code's answers
	}
	s := cmp.Or(o.HookSpecificOutput, &hook.Specific{})
	if out := (copilotOutput{o.Decision, o.Reason, s.PermissionDecision, s.PermissionDecisionReason, s.AdditionalContext}); out != (copilotOutput{}) {
		return out
	}
	return nil // a systemMessage alone: the native format has no field for it
}

// copilotFix takes the native payload's fields (a subagent's agentStop: ErrIgnored); apply_patch: a call per file.
func copilotFix(m payload, event string) (more, error) {
	if m.str("hook_event_name") == "" {
		for _, k := range [][2]string{{"toolName", "preToolUse"}, {"prompt", "userPromptSubmitted"}, {"response", "subagentStop"}} {
			if _, ok := m[k[0]]; ok && event == "" {
				event = k[1] // no --event: the first of its keys it has names it
			}
		}
		if event = cmp.Or(event, "agentStop"); m.str("parentAgentId") != "" && event == "agentStop" {
			return more{}, ErrIgnored
		}
		m["hook_event_name"] = event
		for from, to := range map[string]string{
			"sessionId": "session_id", "transcriptPath": "transcript_path", "toolName": "tool_name",
			"toolArgs": "tool_input", "agentId": "agent_id", "agentType": "agent_type",
			"response": "last_assistant_message", "workingDirectory": "cwd",
		} {
			m.rename(from, to)
		}
		// A subagent's own hooks carry its session (its agentId), its subagentStop the parent's: scope them so.
		if child := m.str("agent_id"); child != "" && m.str("session_id") == child && m.str("parentAgentId") != "" {
			m["session_id"] = m.str("parentAgentId")
		}
		if s, ok := m["tool_input"].(string); ok {
			var v any // toolArgs may come as JSON text
			if json.Unmarshal([]byte(s), &v) == nil {
				m["tool_input"] = v
			}
		}
	}
	if t := m.str("tool_name"); t == "edit" || t == "str_replace_editor" {
		if m.args()["command"] == "view" {
			m["tool_name"] = "view"
		}
		delete(m.args(), "command") // str_replace_editor's, not a shell command
	}
	return more{calls: patchWrites(m, "input", "patch", "command")}, nil
}

// copilotLine is a line of Copilot CLI's events.jsonl, a subagent's with its agentId.
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

func copilotShow(l *copilotLine, e *entry, r reader) {
	e.agent = l.AgentID
	d := l.Data
	switch l.Type {
	case "tool.execution_start":
		a, name := args(d.Arguments), d.ToolName
		if r.in.tools[name] == "Edit" && a["command"] == "view" {
			name = "view" // str_replace_editor's view
		}
		r.call(e, name, a)
	case "user.message": // a fed-back block is one too: its hook.end counts it
		var s string
		json.Unmarshal(d.Content, &s)
		if s != "" && !strings.HasPrefix(s, hook.BlockPrefix) {
			e.typed = &s
		}
	case "hook.end":
		if ev := copilotEvent[d.HookType]; d.Output.Decision == "block" && (ev == hook.Stop || ev == hook.SubagentStop) {
			e.block, e.blockEvent = &d.Output.Reason, ev
		}
	}
}

// versionedFormat is a {"version": 1, "hooks": {event: [entry, …]}} hook file: Copilot CLI's and Cursor's.
type versionedFormat struct {
	title  string                        // the client, as errors name it
	events []string                      // in the client's documented order
	entry  func(settings.Hook) hookEntry // the entry gate init writes
}

// versionedFile is the file's shape, as far as stopgate reads it.
type versionedFile struct {
	Version int                          `json:"version"`
	Hooks   map[string][]json.RawMessage `json:"hooks"`
}

// hookEntry is Copilot's command entry (bash, timeoutSec) or Cursor's.
type hookEntry struct {
	Type       string `json:"type"`
	Bash       string `json:"bash,omitempty"`
	TimeoutSec int    `json:"timeoutSec,omitempty"`
	Command    string `json:"command,omitempty"`
	Timeout    int    `json:"timeout,omitempty"`
	LoopLimit  int    `json:"loop_limit,omitempty"`
}

// run is the entry's command line, in either client's key.
func (c hookEntry) run() string { return cmp.Or(c.Bash, c.Command) }

// parse decodes a hook file, or says where it is broken (and the file is empty).
func (v versionedFormat) parse(data []byte) (*versionedFile, error) {
	var f versionedFile
	err := json.Unmarshal(data, &f)
	if se, ok := errors.AsType[*json.SyntaxError](err); ok {
		return &versionedFile{}, settings.ErrorAt(data, max(int(se.Offset)-1, 0), "%s", se.Error()) // Offset is past the bad byte
	} else if te, ok := errors.AsType[*json.UnmarshalTypeError](err); ok {
		return &versionedFile{}, settings.ErrorAt(data, int(te.Offset), "%s is a JSON %s, not what %s reads", te.Field, te.Value, v.title)
	}
	return &f, err
}

// registered reports, for each wanted hook, whether the file runs its program.
func (f *versionedFile) registered(want []settings.Hook) []settings.Found {
	out := make([]settings.Found, len(want))
	for i, h := range want {
		out[i] = settings.Found{Hook: h}
		for _, raw := range f.Hooks[h.Event] {
			var c hookEntry
			if json.Unmarshal(raw, &c) == nil && c.run() != "" && settings.Program(c.run()) == settings.Program(h.Command) {
				out[i].Registered, out[i].Command, out[i].Timeout = true, c.run(), cmp.Or(c.TimeoutSec, c.Timeout)
				break
			}
		}
	}
	return out
}

// merge adds the wanted hooks that data does not register yet.
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
		if h := want[i]; !fd.Registered {
			f.Hooks[h.Event] = append(f.Hooks[h.Event], json.RawMessage(settings.Quote(v.entry(h))))
			added = append(added, h)
		}
	}
	if len(added) == 0 {
		return data, nil, nil
	}
	return v.render(f), added, nil
}

// render writes one command a line, events in the documented order.
func (v versionedFormat) render(f *versionedFile) []byte {
	rank := func(e string) int { return cmp.Or(slices.Index(v.events, e)+1, len(v.events)+1) } // unknown ones last
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
		lists[i] = fmt.Sprintf("\n    %s: [%s\n    ]", settings.Quote(e), strings.Join(cmds, ","))
	}
	return fmt.Appendf(nil, "{\n  \"version\": %d,\n  \"hooks\": {%s\n  }\n}\n", f.Version, strings.Join(lists, ","))
}

// remove is merge's inverse for the commands still as want's; Left names one of programs changed since.
func (v versionedFormat) remove(data []byte, want []settings.Hook, programs []string) (out []byte, r settings.Removal, empty bool, err error) {
	f, err := v.parse(data)
	if err != nil {
		return nil, r, false, err
	}
	for e, list := range f.Hooks {
		f.Hooks[e] = slices.DeleteFunc(list, func(raw json.RawMessage) bool {
			h, ok := v.own(raw, e, want)
			var c hookEntry
			if ok {
				r.Removed = append(r.Removed, h.String())
			} else if json.Unmarshal(raw, &c) == nil && c.run() != "" && slices.Contains(programs, settings.Program(c.run())) {
				r.Left = append(r.Left, fmt.Sprintf("hooks.%s: runs %s, but is not as gate init wrote it", e, settings.Program(c.run())))
			}
			return ok
		})
		if len(f.Hooks[e]) == 0 {
			delete(f.Hooks, e)
		}
	}
	slices.Sort(r.Removed)
	slices.Sort(r.Left)
	if len(r.Removed) == 0 {
		return data, r, false, nil
	}
	return v.render(f), r, len(f.Hooks) == 0, nil
}

// own reports whether raw is exactly a command gate init wrote for event.
func (v versionedFormat) own(raw json.RawMessage, event string, want []settings.Hook) (settings.Hook, bool) {
	var c hookEntry
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
