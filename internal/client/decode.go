package client

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/hook"
)

// Options is what the registration says about its hook.
type Options struct {
	Client string              // --client; "" recognises the input
	Event  string              // --event, for clients whose input does not name it
	Getenv func(string) string // the hook's environment, a safety net for recognition
}

// Flags adds to fl the flags gate init writes on every hook and returns the Options they fill.
func Flags(fl *flag.FlagSet, getenv func(string) string) *Options {
	opt := &Options{Getenv: getenv}
	fl.StringVar(&opt.Client, "client", "", "the agent client the hook is registered for (gate init --client)")
	fl.StringVar(&opt.Event, "event", "", "the client's event, when its input does not name it")
	return opt
}

// ErrIgnored is an input stopgate must not answer (exit 0, no output).
var ErrIgnored = errors.New("hook input is a subagent's agentStop; its subagentStop is gated instead")

// MismatchError is an input from another client than the registration's; Input is it decoded, for the answer.
type MismatchError struct {
	Registered, Detected string
	Input                *hook.Input
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("hook input is from %s, but this hook is registered with --client %s; register it with: gate init --client %s",
		e.Detected, e.Registered, e.Detected)
}

// Decode reads one hook input from r, checked against the registration, and the writer of its answers on w.
func Decode(r io.Reader, w io.Writer, opt Options, events ...string) (*hook.Input, hook.Answer, error) {
	data, err := Read(r)
	if err != nil {
		return nil, AnswerTo(w, opt.Client), err
	}
	in, err := Parse(data, opt, events...)
	return in, hook.AnswerTo(w, in), err
}

// Read reads one hook input's bytes from r, up to hook.MaxInput.
func Read(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, hook.MaxInput+1))
	if err != nil {
		return nil, fmt.Errorf("reading hook input: %w", err)
	}
	if len(data) > hook.MaxInput {
		return nil, fmt.Errorf("hook input is larger than %d MiB", hook.MaxInput>>20)
	}
	return data, nil
}

// Parse is Decode on bytes already read.
func Parse(data []byte, opt Options, events ...string) (*hook.Input, error) {
	if opt.Client != "" && Named(opt.Client) == nil {
		return nil, fmt.Errorf("unknown --client %q, want one of %s", opt.Client, strings.Join(Names, ", "))
	}
	detected, sure := Recognise(data, opt.Getenv)
	client := cmp.Or(opt.Client, detected)
	registered := Named(cmp.Or(opt.Client, Claude.Name)) // Claude Code's passes no --client
	if c := Named(detected); sure && c != registered && slices.Contains(c.Runs, registered) {
		in, err := decode(c, data, "", events)
		if err == nil && c.aside != nil {
			err = c.aside(in) // ErrIgnored: in is not answered
		}
		return in, err
	}
	if sure && detected != client {
		mm := &MismatchError{Registered: client, Detected: detected}
		mm.Input, _ = decode(Named(detected), data, "", events)
		return nil, mm
	}
	return decode(Named(client), data, opt.Event, events)
}

// decode decodes data as c's, an input for one of events.
func decode(c *Client, data []byte, event string, events []string) (*hook.Input, error) {
	trimmed, s := bytes.TrimSpace(data), c.input
	if s == nil || len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		return hook.Parse(data, events...) // the reference, and what is wrong with the rest
	}
	var m payload
	d := json.NewDecoder(bytes.NewReader(trimmed))
	d.UseNumber()
	d.Decode(&m) // one JSON object, as checked
	for _, k := range s.drop {
		delete(m, k)
	}
	x, err := s.fix(m, event)
	if err != nil {
		return nil, err
	}
	if v, ok := m.args()[s.file]; ok {
		m.args()["file_path"] = v // the client's key wins: its tool writes that one
	}
	if t, ok := s.tools[m.str("tool_name")]; ok {
		m["tool_name"] = t
	}
	data, _ = json.Marshal(m)       // values decoded from JSON, and the fixes' strings and maps, always marshal
	in, err := hook.Unmarshal(data) // type-checked as Claude Code's
	if err != nil {
		return nil, err
	}
	in.Reads, in.Calls, in.StopID = x.reads, x.calls, x.stopID
	if cwd := abs(x.cwd, in.Cwd); cwd != "" && cwd != in.Cwd && in.ToolName == "Bash" {
		in.Calls = []hook.Call{{Tool: in.ToolName, Input: in.Tool, Cwd: cwd}}
	}
	// The client's own event name stays for messages; stopgate's is judged.
	in.Client, in.ClientEvent, in.HookEventName = c.dialect(), in.HookEventName, c.Event(in.HookEventName)
	if err := in.Check(events...); err != nil {
		return nil, err
	}
	return in, nil
}

// shape is how a client's input object becomes Claude Code's.
type shape struct {
	drop  []string          // keys never read: tool results, which carry whole files
	tools map[string]string // its tools to the Claude Code tools stopgate judges
	file  string            // its tools' file argument, taken as file_path
	// fix rewrites what the table cannot (event: --event), and says what more the input does; noFix: nothing.
	fix func(m payload, event string) (more, error)
}

func noFix(payload, string) (more, error) { return more{}, nil }

// more is what an input does beyond its one Claude Code tool call.
type more struct {
	reads  []string    // hook.Input.Reads
	calls  []hook.Call // hook.Input.Calls
	cwd    string      // where its shell command runs, when not in the project
	stopID string      // hook.Input.StopID
}

// probe is what recognition looks at.
type probe struct {
	HookEventName string          `json:"hook_event_name"`
	SessionID     string          `json:"sessionId"`
	TurnID        *string         `json:"turn_id"`
	ToolResult    json.RawMessage `json:"tool_result"`
	top           map[string]json.RawMessage
}

// recognisers are asked in order: an input is the client's whose marks (text) it holds and whose test takes it.
var recognisers = []struct {
	c     *Client
	marks []string
	is    func(p *probe) bool
}{
	{Cursor, []string{"cursor_version"}, func(p *probe) bool { return p.top["cursor_version"] != nil }},
	{VSCode, []string{"hookEventName", "timestamp"}, vscodeOwns},
	{Copilot, []string{"sessionId"}, func(p *probe) bool { return p.HookEventName == "" && p.SessionID != "" }}, // native: camelCase, no event name
	{Gemini, geminiEvents, func(p *probe) bool { return slices.Contains(geminiEvents, p.HookEventName) }},
	{Codex, []string{"turn_id"}, func(p *probe) bool { return p.TurnID != nil }},
	{Copilot, []string{"tool_result"}, func(p *probe) bool { return p.ToolResult != nil }}, // the Claude-shaped file
}

// Recognise says which client an input is from, and whether it is sure (Claude Code is the guess).
func Recognise(data []byte, getenv func(string) string) (client string, sure bool) {
	var p *probe
	for _, r := range recognisers {
		// Most inputs are Claude Code's: a whole file is decoded a second time only when a mark is in it.
		if !slices.ContainsFunc(r.marks, func(m string) bool { return bytes.Contains(data, []byte(`"`+m+`"`)) }) {
			continue
		}
		if p == nil {
			if p = new(probe); json.Unmarshal(data, p) != nil || json.Unmarshal(data, &p.top) != nil {
				return Claude.Name, false
			}
		}
		if r.is(p) {
			return r.c.Name, true
		}
	}
	for _, v := range [][2]string{{"COPILOT_HOOK_DIR", Copilot.Name}, {"GEMINI_SESSION_ID", Gemini.Name}} {
		if getenv != nil && getenv(v[0]) != "" {
			return v[1], true
		}
	}
	return Claude.Name, false
}

// payload is a client's input, rewritten into Claude Code's shape.
type payload map[string]any

// str returns m[k] when it is a string.
func (m payload) str(k string) string {
	s, _ := m[k].(string)
	return s
}

// args returns the tool's arguments, nil when they are not an object.
func (m payload) args() map[string]any {
	a, _ := m["tool_input"].(map[string]any)
	return a
}

// rename moves m[from] to m[to] when present.
func (m payload) rename(from, to string) {
	if v, ok := m[from]; ok {
		delete(m, from)
		m[to] = v
	}
}

// patchWrites takes an apply_patch call as a Write of each file its envelope (tool_input, or the first string under
// keys) adds, changes, deletes or moves to; nil for another tool.
func patchWrites(m payload, keys ...string) []hook.Call {
	if m.str("tool_name") != "apply_patch" {
		return nil
	}
	patch, _ := m["tool_input"].(string)
	for _, k := range keys {
		if s, ok := m.args()[k].(string); ok && patch == "" {
			patch = s
		}
	}
	var files []string
	for line := range strings.Lines(patch) {
		for _, h := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if f, ok := strings.CutPrefix(line, h); ok && strings.TrimSpace(f) != "" {
				files = append(files, strings.TrimSpace(f))
			}
		}
	}
	m["tool_input"] = map[string]any{}
	return writes(files)
}

// writes returns a guard call of Write for each file.
func writes(files []string) []hook.Call {
	calls := []hook.Call{}
	for _, f := range files {
		calls = append(calls, hook.Call{Tool: "Write", Input: hook.ToolInput{FilePath: f}})
	}
	return calls
}

// listed returns the strings of the JSON list v, or with key, each element's key; "" left out.
func listed(v any, key string) []string {
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if key != "" {
			m, _ := x.(map[string]any)
			x = m[key]
		}
		if s, _ := x.(string); s != "" {
			out = append(out, s)
		}
	}
	return out
}
