package gate

import (
	"slices"
	"testing"

	"github.com/stopgate/stopgate/internal/detect"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/testhook"
)

// TestRegistrationsHandled: each client's file registers a program only
// for an event it handles (a registration it refuses would fail on every
// event), as the programs decode them.
func TestRegistrationsHandled(t *testing.T) {
	handles := map[string][]string{hook.Detect: detect.Events, hook.Gate: hook.Handles[hook.Gate], hook.Testhook: testhook.Events}
	for _, c := range agentClients {
		for _, r := range c.Hooks {
			if e := c.Event(r.Event); !slices.Contains(handles[r.Program], e) {
				t.Errorf("%s: %s is registered for %s (%s), which it does not handle", c.Name, r.Program, r.Event, e)
			}
		}
	}
}
