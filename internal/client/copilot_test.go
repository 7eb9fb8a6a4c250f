package client

import (
	"testing"

	"github.com/stopgate/stopgate/internal/settings"
)

// remove undoes merge in Copilot CLI's native file, keeps a person's commands, and names a
// command of stopgate's changed since.
func TestCopilotRemove(t *testing.T) {
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
		{name: "new", in: `{"version": 1}`, removed: 2, empty: true},
		{name: "a person's command", in: `{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "echo hi"}]}}`, removed: 2},
		{name: "changed since", in: `{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "bin/gate --client copilot", "timeoutSec": 900}]}}`, removed: 1, left: 1},
		{name: "extra key", in: `{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "bin/gate --client copilot", "timeoutSec": 600, "env": {}}]}}`, removed: 1, left: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			merged, _, err := Copilot.format.merge([]byte(tc.in), want)
			if err != nil {
				t.Fatal(err)
			}
			out, r, empty, err := Copilot.format.remove(merged, want, programs)
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
	if _, _, _, err := Copilot.format.remove([]byte("{,}"), want, programs); err == nil {
		t.Error("a file that is not JSON was not refused")
	}
}

// renderOf is data in the layout Copilot.format.render writes.
func renderOf(t *testing.T, data []byte) []byte {
	f, err := Copilot.format.parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return Copilot.format.render(f)
}
