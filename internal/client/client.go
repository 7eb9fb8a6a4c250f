// Package client holds every agent client stopgate gates, one file each
// (claude.go, codex.go, gemini.go, copilot.go, opencode.go, qwen.go,
// cursor.go, vscode.go), each one Client value: how its hook input decodes
// into stopgate's event and its answers encode back (a halt as the client
// acts on it), its record of a session, its hook registration and files,
// and its second wall. All is the only list; callers never ask which
// client it is. Claude Code is the reference: hook.Parse decodes its
// inputs, and its answers are written as they are.
//
// To add a client, write NAME.go with its Client value, add it to All, and
// add its tests beside the others' (docs/clients.md, "Adding a client").
package client

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/transcript"
)

// Client is one agent client: everything stopgate knows of it.
type Client struct {
	Name  string // as --client takes it
	Title string // as a person names it

	// HookFile is the project file the hooks are registered in
	// (slash-separated); Settings are its other project files that can
	// switch them off. The guard protects both.
	HookFile string
	Settings []string

	// Hooks are what gate init registers and gate check expects, events in
	// the client's own names. Their timeouts are backstops for a wedged
	// process, not budgets.
	Hooks      []Hook
	Timeout    time.Duration // the client's timeout of a hook registered without one
	ProjectVar string        // the variable set to the project root; "": commands name the bin dir absolute
	Unit       int           // multiplies a timeout in seconds into the hook file's unit
	EventFlag  bool          // each command names its event (--event): the input does not
	BlockCap   int           // consecutive blocks after which the client lets the agent stop; 0: none
	Trust      string        // what the user must do about the client's trust gate
	Limits     []string      // what the client lacks that a stopgate feature needs
	Wall       Wall          // the client's second wall gate init puts up; nil: none
	WallLeft   string        // what the guard alone stands against, wall up or not

	events map[string]string // the client's event names that are not stopgate's, to stopgate's
	// decode turns a JSON object the client sent into stopgate's event;
	// event is the registration's --event. nil: Claude Code's shape.
	decode func(data []byte, event string) (*hook.Input, error)
	// encode turns an answer into what the client reads; nil: as it is.
	encode func(event string, o hook.Output) any
	// halt is a halt as the client acts on it; nil: hook.Halt, shown to the user.
	halt  func(reason string, relayed bool) (hook.Output, bool)
	where func(in *hook.Input, agent string) (string, transcript.Thread) // Record.Where
	lines func(b []byte, cwd string, sh Shell) *entry                    // a record line; nil: package transcript's
	// format reads and edits the hook file; nil: Claude Code's shape (package settings).
	format hookFormat
	// marks are top-level input keys only this client sends; owns, when
	// set, decides from the input's top-level fields once one is there.
	marks []string
	owns  func(top map[string]json.RawMessage) bool
	// Runs are the clients whose registrations this client also runs with
	// its own inputs, decoded and answered as its own; aside returns an
	// error wrapping ErrIgnored when such a registration must step aside.
	Runs  []*Client
	aside func(in *hook.Input) error
	// plugin is the plugin file that registers the hooks, for a client
	// without command hooks (OpenCode).
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

// Hook is one hook gate init registers in a client's file.
type Hook struct {
	Event   string // as the client names it
	Matcher string // tool-name pattern for tool events
	Program string // one of hook.Programs
	Timeout int    // seconds
}

// Event returns stopgate's name (Claude Code's) for the client's own event.
func (c *Client) Event(event string) string {
	if e, ok := c.events[event]; ok {
		return e
	}
	return event
}

// dialect is a client as the writer of the answers to its inputs
// (hook.Dialect).
type dialect struct{ c *Client }

func (d dialect) Name() string { return d.c.Name }

func (d dialect) Encode(event string, o hook.Output) any {
	if d.c.encode == nil {
		return o
	}
	return d.c.encode(event, o)
}

func (d dialect) Halt(reason string, relayed bool) (hook.Output, bool) {
	if d.c.halt == nil {
		return hook.Halt(reason), false
	}
	return d.c.halt(reason, relayed)
}

// relayHalt is the halt of a client that cannot show the user why: a
// block relaying the reason through the model, at every stop until the
// user acts or the client's cap ends it.
func relayHalt(reason string, _ bool) (hook.Output, bool) {
	return hook.Block(hook.HaltRelay(reason)), false
}

// claudeNamed reports whether event is named as Claude Code names its
// events (capitalised), as a client's Claude-shaped registration sends it.
func claudeNamed(event string) bool { return event != "" && unicode.IsUpper(rune(event[0])) }

// Answer returns o as the client reads it for its event, one line of JSON
// without the newline; "" when the client cannot take it. It serves
// answers written before any input is read (the launcher's fallback).
func (c *Client) Answer(event string, o hook.Output) string {
	var b bytes.Buffer
	if err := c.answerTo(&b, event).Write(o); err != nil {
		return "" // an Output always marshals
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (c *Client) answerTo(w io.Writer, event string) hook.Answer {
	if c == Claude {
		return hook.AnswerTo(w, nil)
	}
	return hook.AnswerTo(w, &hook.Input{ClientEvent: event, Client: dialect{c}})
}

// AnswerTo returns the writer of answers on w in the registered client's
// shape, for an answer before the input says whose it is.
func AnswerTo(w io.Writer, name string) hook.Answer {
	if c := Named(name); c != nil {
		return c.answerTo(w, "")
	}
	return Claude.answerTo(w, "")
}

// hookFormat reads and edits a hook file in a client's own shape, as
// package settings does Claude Code's.
type hookFormat interface {
	empty() []byte
	merge(data []byte, want []settings.Hook) ([]byte, []settings.Hook, error)
	lookup(data []byte, want []settings.Hook) ([]settings.Found, error)
	remove(data []byte, want []settings.Hook, programs []string) (out []byte, r settings.Removal, empty bool, err error)
}

// NewFile is the text of the client's hook file before gate init merges
// hooks into it; nil: nothing (an empty object).
func (c *Client) NewFile() []byte {
	if c.format == nil {
		return nil
	}
	return c.format.empty()
}

// Merge adds the wanted hooks data does not register yet, keeping every
// other byte; it returns those it added.
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

// Remove is Merge's inverse: it takes out each hook of want still as gate
// init wrote it (in Claude Code's shape, the rules of deny too), and names
// in r.Left a stopgate command changed since. empty: nothing else is left.
func (c *Client) Remove(data []byte, want []settings.Hook, deny []string) (out []byte, r settings.Removal, empty bool, err error) {
	if c.format == nil {
		out, r, err = settings.Remove(data, want, hook.Programs, deny)
		return out, r, false, err
	}
	return c.format.remove(data, want, hook.Programs)
}

// IsPlugin reports whether a plugin file registers the client's hooks.
func (c *Client) IsPlugin() bool { return c.plugin != "" }

// PluginText is the client's plugin for the commands in bin, missing what a
// machine without them is told; false for a client with hook entries.
func (c *Client) PluginText(bin, missing string) (string, bool) {
	if c.plugin == "" {
		return "", false
	}
	return strings.NewReplacer(`"__BIN__"`, settings.Quote(bin), `"__MISSING__"`, settings.Quote(missing)).Replace(c.plugin), true
}

// Commands returns the hook commands in file, one of the client's files,
// as data holds them; none for a file it cannot read.
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

// commandsIn returns every string under a "command" key (Claude Code's
// shape, Codex's, Gemini's) or "bash" (Copilot CLI's) in a hook file.
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
