package gate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/settings"
)

// Copilot CLI's native hook file, .github/hooks/*.json:
//
//	{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "…", "timeoutSec": 600}]}}
//
// Each event lists commands directly; there are no matchers. stopgate
// writes its own file, stopgate.json, so it never edits a person's hook
// file; entries a person adds to it are kept when hooks are added.

// copilotFile is the native file's shape, as far as stopgate reads it.
type copilotFile struct {
	Version int                          `json:"version"`
	Hooks   map[string][]json.RawMessage `json:"hooks"`
}

type copilotCommand struct {
	Type       string `json:"type"`
	Bash       string `json:"bash"`
	TimeoutSec int    `json:"timeoutSec,omitempty"`
}

// parseCopilot decodes a native hook file, or says where it is broken.
func parseCopilot(data []byte) (*copilotFile, error) {
	var f copilotFile
	if err := json.Unmarshal(data, &f); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return nil, settings.ErrorAt(data, max(int(se.Offset)-1, 0), "%s", se.Error()) // Offset is past the bad byte
		case errors.As(err, &te):
			return nil, settings.ErrorAt(data, int(te.Offset), "%s is a JSON %s, not what Copilot CLI reads", te.Field, te.Value)
		}
		return nil, err
	}
	return &f, nil
}

// lookup reports, for each wanted hook, whether the file runs its
// program for its event.
func (f *copilotFile) lookup(want []settings.Hook) []settings.Found {
	out := make([]settings.Found, len(want))
	for i, h := range want {
		out[i] = settings.Found{Hook: h}
		for _, raw := range f.Hooks[h.Event] {
			var c copilotCommand
			if json.Unmarshal(raw, &c) != nil || c.Bash == "" {
				continue
			}
			if settings.Program(c.Bash) == settings.Program(h.Command) {
				out[i].Registered, out[i].Command, out[i].Timeout = true, c.Bash, c.TimeoutSec
				break
			}
		}
	}
	return out
}

// copilotNew is the text of a new native file: no hooks yet.
const copilotNew = `{"version": 1}`

// mergeCopilot adds the wanted hooks that data does not register yet, as
// settings.Merge does in Claude Code's shape. It returns the hooks it
// added; none means data is returned unchanged.
func mergeCopilot(data []byte, want []settings.Hook) ([]byte, []settings.Hook, error) {
	f, err := parseCopilot(data)
	if err != nil {
		return nil, nil, err
	}
	if f.Hooks == nil {
		f.Hooks = map[string][]json.RawMessage{}
	}
	var added []settings.Hook
	for i, fd := range f.lookup(want) {
		if fd.Registered {
			continue
		}
		h := want[i]
		// Not Marshal: it would write the launcher's && as \u0026\u0026.
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		enc.Encode(copilotCommand{Type: "command", Bash: h.Command, TimeoutSec: h.Timeout})
		raw := json.RawMessage(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
		f.Hooks[h.Event] = append(f.Hooks[h.Event], raw)
		added = append(added, h)
	}
	if len(added) == 0 {
		return data, nil, nil
	}
	return renderCopilot(f), added, nil
}

// copilotEvents are the events in the order Copilot CLI documents them.
var copilotEvents = []string{"sessionStart", "userPromptSubmitted", "preToolUse", "postToolUse", "agentStop", "subagentStop", "sessionEnd"}

// renderCopilot writes the file with one command per line, events in
// Copilot's documented order, then any others by name.
func renderCopilot(f *copilotFile) []byte {
	rank := func(e string) int {
		if i := slices.Index(copilotEvents, e); i >= 0 {
			return i
		}
		return len(copilotEvents)
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

// removeCopilot is mergeCopilot's inverse: it takes out each command that
// is still exactly one of want (type, command and timeout, nothing else),
// drops an event it leaves empty, and names in Left a command that runs
// one of programs but was changed since. empty says no hook is left.
func removeCopilot(data []byte, want []settings.Hook, programs []string) (out []byte, r settings.Removal, empty bool, err error) {
	f, err := parseCopilot(data)
	if err != nil {
		return nil, r, false, err
	}
	for e, list := range f.Hooks {
		var keep []json.RawMessage
		for _, raw := range list {
			if h, ok := ownCopilot(raw, e, want); ok {
				r.Removed = append(r.Removed, h.String())
				continue
			}
			var c copilotCommand
			if json.Unmarshal(raw, &c) == nil && c.Bash != "" && slices.Contains(programs, settings.Program(c.Bash)) {
				r.Left = append(r.Left, fmt.Sprintf("hooks.%s: runs %s, but is not as gate init wrote it", e, settings.Program(c.Bash)))
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
	return renderCopilot(f), r, len(f.Hooks) == 0, nil
}

// ownCopilot reports whether raw is a command gate init wrote for event.
func ownCopilot(raw json.RawMessage, event string, want []settings.Hook) (settings.Hook, bool) {
	var c copilotCommand
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if dec.Decode(&c) != nil || c.Type != "command" {
		return settings.Hook{}, false
	}
	for _, h := range want {
		if h.Event == event && settings.SameRun(h.Command, c.Bash) && c.TimeoutSec == h.Timeout {
			return h, true
		}
	}
	return settings.Hook{}, false
}
