// Package client holds every agent client stopgate gates, one file and one Client value each, listed in All; Claude
// Code is the reference (docs/clients.md, "Adding a client").
package client

import (
	"bytes"
	"cmp"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
)

// Client is one agent client: everything stopgate knows of it.
type Client struct {
	Name  string // as --client takes it
	Title string // as a person names it

	HookFile string   // the project file the hooks are registered in, slash-separated
	Settings []string // its other project files that can switch them off

	Hooks      []Hook        // what gate init registers, events in the client's names
	Timeout    time.Duration // the client's timeout of a hook registered without one
	ProjectVar string        // the variable set to the project root; "": commands name the bin dir absolute
	unit       int           // the hook file's timeout units in a second (Unit); 0: 1, seconds
	EventFlag  bool          // each command names its event (--event): the input does not
	BlockCap   int           // consecutive blocks after which the client lets the agent stop; 0: none
	Trust      string        // what the user must do about the client's trust gate
	Limits     []string      // what the client lacks that a stopgate feature needs
	Wall       Wall          // the client's second wall gate init puts up; nil: none
	WallLeft   string        // what the guard alone stands against, wall up or not

	events  map[string]string                                     // the client's event names that are not stopgate's, to stopgate's
	input   *shape                                                // its input as Claude Code's; nil: it is Claude Code's
	encode  func(event string, o hook.Output) any                 // an answer as the client reads it; nil: as it is
	halt    func(reason string, relayed bool) (hook.Output, bool) // nil: hook.Halt, which the client shows
	threads threads                                               // where its record keeps a subagent's thread (Record.Where)
	lines   func(b []byte, r reader) *entry                       // a record line; nil: package transcript's
	format  *versionedFormat                                      // the hook file's; nil: Claude Code's (package settings)
	Runs    []*Client                                             // the clients whose registrations it runs too, as its own
	aside   func(in *hook.Input) error                            // wraps ErrIgnored when such a registration steps aside
	plugin  string                                                // the plugin registering the hooks, for a client without command hooks
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
	if i := slices.IndexFunc(All, func(c *Client) bool { return c.Name == name }); i >= 0 {
		return All[i]
	}
	return nil
}

// Of returns the client that sent in: Claude Code when no dialect decoded it.
func Of(in *hook.Input) *Client {
	if in == nil || in.Client == nil {
		return Claude
	}
	return Named(in.Client.Name)
}

// Hook is one hook gate init registers in a client's file.
type Hook struct {
	Event   string // as the client names it
	Matcher string // tool-name pattern for tool events
	Program string // one of hook.Programs
	Timeout int    // seconds
}

// claudeHooks are the hooks of a client of Claude Code's events whose tools that read and write match read and write.
func claudeHooks(read, write string) []Hook {
	return []Hook{{hook.PostToolUse, read, hook.Detect, 10}, {hook.UserPromptSubmit, "", hook.Detect, 10},
		{hook.PreToolUse, write, hook.Detect, 10}, {hook.Stop, "", hook.Gate, 600}, {hook.SubagentStop, "", hook.Gate, 600},
		{hook.UserPromptSubmit, "", hook.Testhook, 10}, {hook.Stop, "", hook.Testhook, 600}}
}

// ownHooks are hooks in a client's event names (events: its to stopgate's); a hook of an event it lacks goes.
func ownHooks(hooks []Hook, events map[string]string) []Hook {
	var out []Hook
	for _, h := range hooks {
		for own, ev := range events {
			if ev == h.Event {
				out = append(out, Hook{own, h.Matcher, h.Program, h.Timeout})
			}
		}
	}
	return out
}

// Unit multiplies a timeout in seconds into the hook file's unit.
func (c *Client) Unit() int { return cmp.Or(c.unit, 1) }

// Event returns stopgate's name (Claude Code's) for the client's own event.
func (c *Client) Event(event string) string { return cmp.Or(c.events[event], event) }

// dialect is the client as the writer of its answers; nil: Claude Code, the reference.
func (c *Client) dialect() *hook.Dialect {
	if c == Claude {
		return nil
	}
	return &hook.Dialect{Name: c.Name, Encode: c.encode, Halt: c.halt}
}

// relayHalt is the halt of a client that cannot show the user why: a block relaying it, until the cap.
func relayHalt(reason string, _ bool) (hook.Output, bool) {
	return hook.Block(hook.HaltRelay(reason)), false
}

// Answer returns o as the client reads it for event, one line of JSON ("" for none), for the launcher.
func (c *Client) Answer(event string, o hook.Output) string {
	var b bytes.Buffer
	hook.AnswerTo(&b, &hook.Input{ClientEvent: event, Client: c.dialect()}).Write(o) // an Output always marshals
	return strings.TrimSuffix(b.String(), "\n")
}

// AnswerTo returns the writer of answers on w in the registered client's shape.
func AnswerTo(w io.Writer, name string) hook.Answer {
	return hook.AnswerTo(w, &hook.Input{Client: cmp.Or(Named(name), Claude).dialect()})
}

// NewFile is the hook file's text before gate init merges hooks into it.
func (c *Client) NewFile() []byte {
	if c.format == nil {
		return nil
	}
	return []byte(`{"version": 1}`)
}

// Merge adds the wanted hooks data does not register yet; it returns those.
func (c *Client) Merge(data []byte, want []settings.Hook) ([]byte, []settings.Hook, error) {
	if c.format == nil {
		return settings.Merge(data, want)
	}
	return c.format.merge(data, want)
}

// Lookup reports, for each wanted hook, whether data registers it.
func (c *Client) Lookup(data []byte, want []settings.Hook) ([]settings.Found, error) {
	if c.format == nil {
		return settings.Parse(data).Lookup(want)
	}
	f, err := c.format.parse(data)
	return f.registered(want), err
}

// Remove is Merge's inverse (deny's rules too); r.Left names a command changed since; empty: none is left.
func (c *Client) Remove(data []byte, want []settings.Hook, deny []string) (out []byte, r settings.Removal, empty bool, err error) {
	if c.format == nil {
		out, r, err = settings.Remove(data, want, hook.Programs, deny)
		return out, r, false, err
	}
	return c.format.remove(data, want, hook.Programs)
}

// IsPlugin reports whether a plugin file registers the client's hooks.
func (c *Client) IsPlugin() bool { return c.plugin != "" }

// PluginText is the client's plugin ("": none) for the commands in bin, missing what a machine without them is told.
func (c *Client) PluginText(bin, missing string) string {
	return strings.NewReplacer(`"__BIN__"`, settings.Quote(bin), `"__MISSING__"`, settings.Quote(missing)).Replace(c.plugin)
}

// Commands returns the hook commands data, the client's file, holds.
func (c *Client) Commands(file string, data []byte) []string {
	if c.IsPlugin() && file == c.HookFile {
		return pluginCommands(data)
	}
	return commandsIn(data)
}

// commandsIn returns every string under a "command" or "bash" key of v, or of JSON text (not JSON: none).
func commandsIn(v any) []string {
	var out []string
	switch v := v.(type) {
	case []byte:
		var x any
		json.Unmarshal(v, &x)
		return commandsIn(x)
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

// Wall is a client's second wall, which gate init turns on (docs/clients.md, "The second wall per client").
type Wall interface {
	File() string            // the project config the wall is in, slash-separated
	Ready(root string) error // refuses a config the wall cannot be merged into, before init writes
	// Up merges the wall over paths into the project's config, every other byte kept, and says so on w.
	Up(w io.Writer, root string, paths []Path) error
	// Check says what keeps the wall down; getenv is the user's environment (the client's own config).
	Check(getenv func(string) string, root string, paths []Path) []Finding
	// Remove is Up's inverse while the config is as init wrote it; gone: nothing is left, the file goes.
	Remove(data []byte, root string, paths []Path) (out []byte, r settings.Removal, gone bool, err error)
}

// Path is a protected path a wall keeps the agent from (guard.Protected).
type Path struct {
	Path string // absolute and clean, slash-separated
	Show string // relative to the root when inside it
	Dir  bool   // a folder even before it exists
}

// Finding is what a wall's check found, as gate check prints it.
type Finding struct {
	Loc     string // the file
	Warning bool
	Msg     string
	Hint    string
}

// mergeError names where a config a wall cannot be merged into is broken.
func mergeError(name string, err error) error {
	return cli.WithHint(settings.Named(name, err), "the file is left as it was: fix it by hand, then run gate init again")
}
