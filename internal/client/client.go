// Package client holds every agent client stopgate gates, one file each
// (claude.go, codex.go, gemini.go, copilot.go, opencode.go, qwen.go, cursor.go,
// vscode.go), behind one
// type: a Client value says all stopgate knows of its client. All is the
// only list of them; detect, gate, testhook, the guard and gate init read
// a client's part through its value and never ask which client it is.
//
// A Client holds:
//
//   - its hook input, decoded into stopgate's own event (a hook.Input in
//     Claude Code's terms: Decode, Parse), and its answers encoded back as
//     the client reads them (the hook.Dialect set on the input), a halt as
//     the client acts on it;
//   - its own record of a session (Record), which the gate reads at every
//     stop to reconcile the queue;
//   - its registration: the hook file, each hook's event (in the client's
//     own names), matcher, program and timeout, the flags its commands
//     pass, its block cap, what the user must do about its trust gate, and
//     what it lacks that a feature needs (Limits);
//   - its files the guard protects (HookFile, Settings), and its second
//     wall (Wall), the client's own sandbox or permission rules where it
//     offers one a project can turn on.
//
// Claude Code is the reference: its inputs are decoded by hook.Parse as
// they are, and its answers written unchanged (its dialect is nil).
//
// To add a client, write NAME.go with its Client value and add it to All:
// a decode function (the shared helpers object, rename and claudeShaped
// rewrite a JSON payload into Claude Code's shape), a hook.Dialect for its
// answers (Encode, Halt), its record (where, and a lines decoder for a
// record kept as JSON lines), its hooks and files; then its tests beside
// the others' (captured inputs in dialect_test.go, a captured record in
// testdata/records, its schemas in testdata/schema). A key only its
// inputs carry (marks, owns) makes Recognise tell them from another
// client's; a client that also runs other clients' registrations names
// them (Runs).
package client

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/transcript"
)

// Client is one agent client: everything stopgate knows of it.
type Client struct {
	Name  string // as --client takes it
	Title string // as a person names it

	// HookFile is the project file the hooks are registered in
	// (slash-separated from the root); Settings are the client's other
	// project files that can switch them off. The guard protects them.
	HookFile string
	Settings []string

	// Hooks are the hooks gate init registers and gate check expects,
	// events in the client's own names.
	//
	// Timeouts are backstops for a wedged process, not budgets: detect
	// answers in milliseconds; the gate enforces each validator's own
	// timeout and runs them in parallel, so its hook timeout only needs to
	// exceed the longest (`gate check` says when it does not); the gate is
	// told it (--timeout).
	Hooks []Hook
	// Timeout is the client's own timeout of a hook registered without one.
	Timeout time.Duration
	// ProjectVar is the variable the client sets to the project root, which
	// hook commands start from; "": none, they name the bin dir absolute.
	ProjectVar string
	// Unit multiplies a timeout in seconds into the hook file's unit.
	Unit int
	// EventFlag: each hook command names its event (--event), which the
	// client's input does not.
	EventFlag bool
	// BlockCap is the consecutive blocks after which the client lets the
	// agent stop anyway; 0: no cap, max_blocks alone ends a loop.
	BlockCap int
	Trust    string   // what the user must do about the client's trust gate
	Limits   []string // what the client lacks that a stopgate feature needs
	// Wall is the client's second wall, which gate init puts up (nil: the
	// client offers none a project can turn on); WallLeft is what the guard
	// alone stands against, wall up or not.
	Wall     Wall
	WallLeft string

	// events maps the client's own event names that are not stopgate's to
	// stopgate's.
	events map[string]string
	// answers writes the answers to an input not decoded yet (a panic while
	// it is read, the launcher's fallback); nil: Claude Code's shape.
	answers hook.Dialect
	// decode turns a JSON object the client sent into stopgate's event;
	// event is the registration's --event.
	decode func(data []byte, event string) (*hook.Input, error)
	// where is Record.Where; lines decodes a line of a record kept as JSON
	// lines (nil: Claude Code's transcript, read by package transcript).
	where func(in *hook.Input, agent string) (string, transcript.Thread)
	lines func([]byte) line

	// format reads and edits the hook file: Claude Code's shape (package
	// settings) when nil.
	format hookFormat
	// marks are top-level input keys only this client sends, one of which
	// recognises its input from any registration (none: never recognised);
	// owns, when set, decides from the input's top-level fields once a
	// mark is there.
	marks []string
	owns  func(top map[string]json.RawMessage) bool
	// Runs are the clients whose registrations this client also runs with
	// its own inputs, which are then decoded and answered as its own.
	// aside, when set, returns an error wrapping ErrIgnored when such a
	// registration must step aside for the input.
	Runs  []*Client
	aside func(in *hook.Input) error

	// plugin is the plugin file that registers the hooks, for a client
	// without command hooks (OpenCode); "" for the others.
	plugin string
}

// All is every client, the reference first.
var All = []*Client{Claude, Codex, Gemini, Copilot, OpenCode, Qwen, Cursor, VSCode}

// Names lists the clients' names, as --client takes them.
var Names = func() []string {
	var out []string
	for _, c := range All {
		out = append(out, c.Name)
	}
	return out
}()

// Named returns the client of name; nil when there is none.
func Named(name string) *Client {
	i := slices.IndexFunc(All, func(c *Client) bool { return c.Name == name })
	if i < 0 {
		return nil
	}
	return All[i]
}

// Of returns the client that sent in: Claude Code when no dialect decoded it.
func Of(in *hook.Input) *Client {
	if in == nil || in.Client == nil {
		return Claude
	}
	return Named(in.Client.Name())
}

// Hook is one hook gate init registers in a client's file: a program for
// an event.
type Hook struct {
	Event   string // as the client names it
	Matcher string // tool-name pattern for tool events, "" for the others
	Program string // one of hook.Programs
	Timeout int    // seconds
}

// Event returns stopgate's name (Claude Code's) for the client's own
// event: Gemini's "AfterAgent" and Copilot's "agentStop" are both "Stop".
func (c *Client) Event(event string) string {
	if e, ok := c.events[event]; ok {
		return e
	}
	return event
}

// Answer returns o as the client reads it on stdout for its event (the
// client's own name), one line of JSON without the newline; "" when the
// client has no way to take it. It serves answers written before any
// input is read: the fallback of gate init's launcher, printed when the
// program is not installed.
func (c *Client) Answer(event string, o hook.Output) string {
	var b bytes.Buffer
	if err := c.answerTo(&b, event).Write(o); err != nil {
		return "" // an Output always marshals
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (c *Client) answerTo(w io.Writer, event string) hook.Answer {
	return hook.AnswerTo(w, &hook.Input{ClientEvent: event, Client: c.answers})
}

// AnswerTo returns the writer of answers on w in the registered client's
// shape, for an answer before the input says whose it is (a panic while
// it is read): a Copilot stop is answered as Copilot acts on it.
func AnswerTo(w io.Writer, name string) hook.Answer {
	if c := Named(name); c != nil {
		return c.answerTo(w, "")
	}
	return Claude.answerTo(w, "")
}

// showsHalt is a client that shows the user a halt's reason itself.
type showsHalt struct{}

func (showsHalt) Halt(reason string, _ bool) (hook.Output, bool) { return hook.Halt(reason), false }

// relaysHalt is a client with no halt that shows the user why: a halt is
// a block relaying its reason through the model (hook.HaltRelay), and as
// the gate halts again at every stop, each is blocked until the user acts
// or the client's own cap ends it.
type relaysHalt struct{}

func (relaysHalt) Halt(reason string, _ bool) (hook.Output, bool) {
	return hook.Block(hook.HaltRelay(reason)), false
}

// claudeAnswers is a client that reads Claude Code's answers as they are.
type claudeAnswers struct{}

func (claudeAnswers) Encode(_ string, o hook.Output) any { return o }

// hookFormat reads and edits a hook file in a client's own shape, as
// package settings does Claude Code's.
type hookFormat interface {
	empty() []byte // a new file's text
	merge(data []byte, want []settings.Hook) ([]byte, []settings.Hook, error)
	lookup(data []byte, want []settings.Hook) ([]settings.Found, error)
	remove(data []byte, want []settings.Hook, programs []string) (out []byte, r settings.Removal, empty bool, err error)
}

// NewFile is the text of the client's hook file before gate init merges
// hooks into it; nil: nothing (Claude Code's shape, an empty object).
func (c *Client) NewFile() []byte {
	if c.format == nil {
		return nil
	}
	return c.format.empty()
}

// Merge adds the wanted hooks data does not register yet, keeping every
// other byte (settings.Merge); it returns those it added.
func (c *Client) Merge(data []byte, want []settings.Hook) ([]byte, []settings.Hook, error) {
	if c.format == nil {
		return settings.Merge(data, want)
	}
	return c.format.merge(data, want)
}

// Lookup reports, for each wanted hook, whether data runs its program for
// its event.
func (c *Client) Lookup(data []byte, want []settings.Hook) ([]settings.Found, error) {
	if c.format == nil {
		return settings.Lookup(data, want)
	}
	return c.format.lookup(data, want)
}

// Remove is Merge's inverse: it takes out each hook of want still exactly
// as gate init wrote it (and, in Claude Code's shape, the deny rules of
// deny), and names in r.Left a command that runs a stopgate program but
// was changed since. empty says the file holds nothing else.
func (c *Client) Remove(data []byte, want []settings.Hook, deny []string) (out []byte, r settings.Removal, empty bool, err error) {
	if c.format == nil {
		out, r, err = settings.Remove(data, want, hook.Programs, deny)
		return out, r, false, err
	}
	return c.format.remove(data, want, hook.Programs)
}

// IsPlugin reports whether a plugin file registers the client's hooks
// (PluginText), not hook entries.
func (c *Client) IsPlugin() bool { return c.plugin != "" }

// PluginText is the client's plugin for the commands in bin, and false for
// a client whose hooks are entries in its hook file: missing is what a
// machine without the commands is told. Both go in as JSON strings, which
// JavaScript reads as the same.
func (c *Client) PluginText(bin, missing string) (string, bool) {
	if c.plugin == "" {
		return "", false
	}
	return strings.NewReplacer(`"__BIN__"`, settings.Quote(bin), `"__MISSING__"`, settings.Quote(missing)).Replace(c.plugin), true
}

// Commands returns the hook commands in file, one of the client's files
// (HookFile, Settings), as data holds them: its plugin's programs, or the
// commands of a JSON hook file; none for a file it cannot read (nil data).
func (c *Client) Commands(file string, data []byte) []string {
	if c.IsPlugin() && file == c.HookFile {
		return pluginCommands(data)
	}
	var v any
	if json.Unmarshal(data, &v) != nil {
		return nil
	}
	return commandsIn(v)
}

// commandsIn returns the hook commands in a decoded hook file: every string
// under a "command" key (Claude Code's shape, Codex's, Gemini's) or "bash"
// (Copilot CLI's).
func commandsIn(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "command" || k == "bash") {
				out = append(out, s)
			} else {
				out = append(out, commandsIn(x)...)
			}
		}
	case []any:
		for _, x := range v {
			out = append(out, commandsIn(x)...)
		}
	}
	return out
}
