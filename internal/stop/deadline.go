package stop

import (
	"fmt"
	"time"

	"github.com/stopgate/stopgate/internal/client"
)

// The gate answers before the client's deadline. A client kills a hook
// that outlives the timeout it was registered with, and then acts as if
// the hook gave no answer: the stop passes. So the gate takes the
// registered timeout (--timeout, as gate init writes it; else the
// client's documented default) and kills whatever validator is still
// running at that deadline less a margin, which then fails as timed out:
// the stop blocks, naming it.

// Deadline is when the gate must have answered a stop.
type Deadline struct {
	At   time.Time     // when running validators are killed
	Hook time.Duration // the client's hook timeout it derives from
}

// NoDeadline is for a run with no client waiting (gate run).
var NoDeadline = Deadline{}

// HookTimeout is the hook timeout of a registration: registered (the
// --timeout flag) when set, else the client's default (client.Timeout,
// /work/shared/agent-clients.md), Claude Code's for a name of none.
func HookTimeout(name string, registered time.Duration) time.Duration {
	if registered > 0 {
		return registered
	}
	if c := client.Named(name); c != nil {
		return c.Timeout
	}
	return client.Claude.Timeout
}

// Margin is how long before the client's hook timeout the gate stops its
// validators: enough to kill them and answer (the engine waits at most a
// few seconds for a killed process group), 5 s, or half of a short one.
func Margin(hook time.Duration) time.Duration { return min(5*time.Second, hook/2) }

// DeadlineFrom returns the deadline of a stop whose hook started at start.
func DeadlineFrom(start time.Time, hook time.Duration) Deadline {
	return Deadline{At: start.Add(hook - Margin(hook)), Hook: hook}
}

// why is what a validator killed at the deadline reports.
func (d Deadline) why() string {
	if d.At.IsZero() {
		return ""
	}
	return fmt.Sprintf("it was still running when stopgate had to answer, %s before the client's hook timeout of %s (raise the gate hook's timeout and --timeout, or make the validator faster)",
		Margin(d.Hook), d.Hook)
}
