package gate

import (
	"testing"

	"github.com/stopgate/stopgate/internal/hook"

	"github.com/stopgate/stopgate/internal/settings"
)

// removeCodexWall undoes mergeCodexWall byte for byte, and leaves a
// profile changed since.
func TestRemoveCodexWall(t *testing.T) {
	paths := []string{".codex", "mappings.toml"}
	for _, tc := range []struct {
		name, in string
		extra    string // appended after the merge: a hand edit
		removed  int
		left     int
		same     bool // back to in
	}{
		{name: "empty", in: "", removed: 2, same: true},
		{name: "keys and tables", in: "model = \"x\"\n\n[tui]\ntheme = \"dark\"\n", removed: 2, same: true},
		{name: "entry added later", in: "model = \"x\"\n", extra: "\"validators\" = \"read\"\n", removed: 2, same: true},
		{name: "hand-made writable", in: "model = \"x\"\n", extra: "\"src\" = \"write\"\n", removed: 1, left: 1},
		{name: "another table after", in: "", extra: "[tui]\n", removed: 1, left: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			merged, _, _, err := mergeCodexWall([]byte(tc.in), paths)
			if err != nil {
				t.Fatal(err)
			}
			out, removed, left, err := removeCodexWall(append(merged, tc.extra...))
			if err != nil {
				t.Fatal(err)
			}
			if len(removed) != tc.removed || len(left) != tc.left {
				t.Errorf("removed %q, left %q", removed, left)
			}
			if tc.same && string(out) != tc.in {
				t.Errorf("got %q, want %q", out, tc.in)
			}
		})
	}
	if _, _, _, err := removeCodexWall([]byte("[a\n")); err == nil {
		t.Error("a file that is not TOML was not refused")
	}
}

// removeCopilot undoes mergeCopilot, keeps a person's commands, and names a
// command of stopgate's changed since.
func TestRemoveCopilot(t *testing.T) {
	want := []settings.Hook{
		{Event: "agentStop", Command: "bin/gate --client copilot", Timeout: 600},
		{Event: "preToolUse", Command: "bin/detect --client copilot", Timeout: 10},
	}
	programs := []string{"gate", "detect"}
	for _, tc := range []struct {
		name, in      string
		removed, left int
		empty         bool
	}{
		{name: "new", in: copilotNew, removed: 2, empty: true},
		{name: "a person's command", in: `{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "echo hi"}]}}`, removed: 2},
		{name: "changed since", in: `{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "bin/gate --client copilot", "timeoutSec": 900}]}}`, removed: 1, left: 1},
		{name: "extra key", in: `{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "bin/gate --client copilot", "timeoutSec": 600, "env": {}}]}}`, removed: 1, left: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			merged, _, err := mergeCopilot([]byte(tc.in), want)
			if err != nil {
				t.Fatal(err)
			}
			out, r, empty, err := removeCopilot(merged, want, programs)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Removed) != tc.removed || len(r.Left) != tc.left || empty != tc.empty {
				t.Errorf("removed %q, left %q, empty %v", r.Removed, r.Left, empty)
			}
			if want := renderOf(t, []byte(tc.in)); tc.left == 0 && !tc.empty && string(out) != string(want) {
				t.Errorf("got %s, want %s", out, want)
			}
		})
	}
	if _, _, _, err := removeCopilot([]byte("{,}"), want, programs); err == nil {
		t.Error("a file that is not JSON was not refused")
	}
}

// renderOf is data in the layout renderCopilot writes.
func renderOf(t *testing.T, data []byte) []byte {
	f, err := parseCopilot(data)
	if err != nil {
		t.Fatal(err)
	}
	return renderCopilot(f)
}

// The plain paths older gate inits wrote go as the launchers do.
func TestUninstallOldPlainForm(t *testing.T) {
	for _, c := range agentClients {
		if c.plugin {
			continue
		}
		owned := c.owned("/p", "bin")
		old := owned[len(c.Hooks):]
		merge := settings.Merge
		if c.native {
			merge = mergeCopilot
		}
		data, added, err := merge([]byte(copilotNew), old)
		if err != nil || len(added) != len(old) {
			t.Fatalf("%s: merge: %v, added %d", c.Name, err, len(added))
		}
		u := undo{}
		if c.native {
			_, u.r, _, err = removeCopilot(data, owned, hook.Programs)
		} else {
			_, u.r, err = settings.Remove(data, owned, hook.Programs, nil)
		}
		if err != nil || len(u.r.Removed) != len(old) || len(u.r.Left) > 0 {
			t.Errorf("%s: %v, removed %q, left %q", c.Name, err, u.r.Removed, u.r.Left)
		}
	}
}
