package stop

import (
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/client"
)

// TestHookTimeout: the registered timeout wins; without one, each client's
// own default, which the gate must answer before.
func TestHookTimeout(t *testing.T) {
	for _, c := range []struct {
		client     string
		registered time.Duration
		hook, at   time.Duration // the hook timeout, and the deadline after the start
	}{
		{client.Claude.Name, 0, 600 * time.Second, 595 * time.Second},
		{"", 0, 600 * time.Second, 595 * time.Second},
		{client.Codex.Name, 0, 600 * time.Second, 595 * time.Second},
		{client.Gemini.Name, 0, 60 * time.Second, 55 * time.Second},
		{client.Copilot.Name, 0, 30 * time.Second, 25 * time.Second},
		{client.Copilot.Name, 120 * time.Second, 120 * time.Second, 115 * time.Second},
		{client.Claude.Name, 3 * time.Second, 3 * time.Second, 1500 * time.Millisecond},
		{client.Claude.Name, time.Second, time.Second, 500 * time.Millisecond},
		{client.Gemini.Name, -5 * time.Second, 60 * time.Second, 55 * time.Second}, // no timeout: the default
	} {
		start := time.Unix(0, 0)
		hook := HookTimeout(c.client, c.registered)
		dl := DeadlineFrom(start, hook)
		if hook != c.hook || dl.At.Sub(start) != c.at {
			t.Errorf("%q --timeout %s: hook %s, deadline +%s; want %s, +%s", c.client, c.registered, hook, dl.At.Sub(start), c.hook, c.at)
		}
	}
}

// Telemetry's export never makes the answer late: it gets its timeout,
// within what is left before the gate's deadline, or nothing.
func TestExportBudget(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		dl   Deadline
		want time.Duration
	}{
		{Deadline{}, 2 * time.Second},
		{Deadline{At: now.Add(time.Minute)}, 2 * time.Second},
		{Deadline{At: now.Add(500 * time.Millisecond)}, 500 * time.Millisecond},
		{Deadline{At: now.Add(-time.Second)}, 0},
	} {
		if got := exportBudget(2*time.Second, c.dl, now); got != c.want {
			t.Errorf("exportBudget(2s, %v) = %v, want %v", c.dl.At, got, c.want)
		}
	}
}
