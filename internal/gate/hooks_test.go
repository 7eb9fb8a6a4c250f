package gate

import (
	"slices"
	"testing"

	"github.com/stopgate/stopgate/internal/detect"
	"github.com/stopgate/stopgate/internal/dialect"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/testhook"
)

// TestRegistrationsHandled: gate init registers each program only for an
// event it handles (a registration it refuses would fail on every event).
func TestRegistrationsHandled(t *testing.T) {
	handles := map[string][]string{hook.Detect: detect.Events, hook.Gate: Events, hook.Testhook: testhook.Events}
	for _, r := range registrations {
		if !slices.Contains(handles[r.program], r.event) {
			t.Errorf("%s is registered for %s, which it does not handle (%v)", r.program, r.event, handles[r.program])
		}
	}
	for _, c := range agentClients {
		for _, r := range c.hooks {
			if e := dialect.Event(c.name, r.event); !slices.Contains(handles[r.program], e) {
				t.Errorf("%s: %s is registered for %s (%s), which it does not handle", c.name, r.program, r.event, e)
			}
		}
	}
}
