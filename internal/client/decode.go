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

// Flags adds to fl the flags every hook registration may pass, as gate
// init writes them (--client, --event), and returns the Options they
// fill, reading the hook's environment through getenv.
func Flags(fl *flag.FlagSet, getenv func(string) string) *Options {
	opt := &Options{Getenv: getenv}
	fl.StringVar(&opt.Client, "client", "", "the agent client the hook is registered for (gate init --client)")
	fl.StringVar(&opt.Event, "event", "", "the client's event, when its input does not name it")
	return opt
}

// ErrIgnored is returned for an input the client sends but stopgate must
// not answer: Copilot's agentStop of a subagent, whose block the client
// ignores and whose stop its own subagentStop gates. Exit 0, no output.
var ErrIgnored = errors.New("hook input is a subagent's agentStop; its subagentStop is gated instead")

// MismatchError is an input recognisably from another client than the
// registration names. Input is it decoded in the dialect it came in, so an
// answer can still reach that client.
type MismatchError struct {
	Registered, Detected string
	Input                *hook.Input
}

func (e *MismatchError) Error() string {
	return fmt.Sprintf("hook input is from %s, but this hook is registered with --client %s; register it with: gate init --client %s",
		e.Detected, e.Registered, e.Detected)
}

// Decode reads one hook input from r and decodes it in its dialect: the
// registered one, checked against what the input looks like. It returns
// the input and the writer of the answers to it on w, in its client's shape.
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
	client := opt.Client
	if client == "" {
		client = detected
	}
	// Claude Code's registration passes no --client (or --client claude).
	registered := Named(cmp.Or(opt.Client, Claude.Name))
	if c := Named(detected); sure && c != registered && slices.Contains(c.Runs, registered) {
		return runsToo(c, data, events)
	}
	if sure && detected != client {
		mm := &MismatchError{Registered: client, Detected: detected}
		if in, err := decode(detected, data, Options{}); err == nil && in.Check(events...) == nil {
			mm.Input = in
		}
		return nil, mm
	}
	if client == Claude.Name {
		return hook.Parse(data, events...) // the reference, exactly as before
	}
	in, err := decode(client, data, opt)
	if err != nil {
		return nil, err
	}
	if err := in.Check(events...); err != nil {
		return nil, err
	}
	return in, nil
}

// runsToo decodes an input of c that came through another client's
// registration c runs (Runs), answered in c's words, unless c says to
// step aside.
func runsToo(c *Client, data []byte, events []string) (*hook.Input, error) {
	in, err := decode(c.Name, data, Options{})
	if err != nil {
		return nil, err
	}
	if err := in.Check(events...); err != nil {
		return nil, err
	}
	if c.aside == nil {
		return in, nil
	}
	if err := c.aside(in); err != nil {
		return nil, err
	}
	return in, nil
}

func decode(client string, data []byte, opt Options) (*hook.Input, error) {
	c := Named(client)
	if c == Claude {
		return hook.Parse(data)
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(trimmed) {
		_, err := hook.Parse(data) // its message says what is wrong
		return nil, err
	}
	return c.decode(trimmed, opt.Event)
}

// probe is what recognition looks at.
type probe struct {
	HookEventName string          `json:"hook_event_name"`
	SessionID     string          `json:"sessionId"`
	TurnID        *string         `json:"turn_id"`
	ToolResult    json.RawMessage `json:"tool_result"`
}

// markers are text every input recognised as another client's contains.
var markers = func() [][]byte {
	out := [][]byte{[]byte(`"sessionId"`), []byte(`"turn_id"`), []byte(`"tool_result"`)}
	for _, e := range geminiEvents {
		out = append(out, []byte(`"`+e+`"`))
	}
	for _, c := range All {
		for _, m := range c.marks {
			out = append(out, []byte(`"`+m+`"`))
		}
	}
	return out
}()

// marked reports whether data may be another client's than Claude Code's:
// one pass over its quotes, each checked against the markers.
func marked(data []byte) bool {
	for i := bytes.IndexByte(data, '"'); i >= 0; {
		for _, m := range markers {
			if bytes.HasPrefix(data[i:], m) {
				return true
			}
		}
		j := bytes.IndexByte(data[i+1:], '"')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// Recognise says which client an input is from, and whether it is sure:
// only Claude Code is ever the guess, when nothing marks the input as
// another client's.
func Recognise(data []byte, getenv func(string) string) (client string, sure bool) {
	env := func(k string) string {
		if getenv == nil {
			return ""
		}
		return getenv(k)
	}
	var p probe
	// Most inputs are Claude Code's: unless a marker is somewhere in the text,
	// skip decoding it all a second time (a PostToolUse carries a whole file).
	if marked(data) && json.Unmarshal(data, &p) != nil {
		return Claude.Name, false
	}
	if c := markedBy(data); c != nil {
		return c.Name, true
	}
	switch {
	case p.HookEventName == "" && p.SessionID != "":
		return Copilot.Name, true // the native payload: camelCase, no event name
	case slices.Contains(geminiEvents, p.HookEventName):
		return Gemini.Name, true
	case p.TurnID != nil:
		return Codex.Name, true
	case p.ToolResult != nil || env("COPILOT_HOOK_DIR") != "":
		return Copilot.Name, true // the Claude-shaped file
	case env("GEMINI_SESSION_ID") != "":
		return Gemini.Name, true
	}
	return Claude.Name, false
}

// markedBy returns the client one of whose marks is a top-level key of
// data, and whose owns, if any, takes the input; nil when none does.
func markedBy(data []byte) *Client {
	var top map[string]json.RawMessage
	for _, c := range All {
		i := slices.IndexFunc(c.marks, func(m string) bool { return bytes.Contains(data, []byte(`"`+m+`"`)) })
		if i < 0 {
			continue
		}
		if top == nil && json.Unmarshal(data, &top) != nil {
			return nil
		}
		if slices.ContainsFunc(c.marks, func(m string) bool { _, ok := top[m]; return ok }) && (c.owns == nil || c.owns(top)) {
			return c
		}
	}
	return nil
}

// claudeShaped re-decodes a client payload rewritten into Claude Code's
// shape, so that fields are type-checked and named like Claude Code's.
func claudeShaped(m map[string]any) (*hook.Input, error) {
	data, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return hook.Unmarshal(data)
}

// object decodes a payload into its top-level fields, dropping the tool
// results: stopgate never reads them, and they may be the largest part.
func object(data []byte, drop ...string) (map[string]any, error) {
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("hook input is not valid JSON: %w", err)
	}
	for _, k := range drop {
		delete(m, k)
	}
	return m, nil
}

// str returns m[k] when it is a string.
func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

// rename moves m[from] to m[to] when present.
func rename(m map[string]any, from, to string) {
	if v, ok := m[from]; ok {
		delete(m, from)
		m[to] = v
	}
}
