package stop

import (
	"fmt"
	"time"

	"github.com/stopgate/stopgate/internal/client"
)

// Deadline is when the gate must have answered a stop: a client that kills
// a hook past its timeout lets the stop pass, so validators still running
// at the deadline are killed and fail as timed out.
type Deadline struct {
	At   time.Time     // when running validators are killed
	Hook time.Duration // the client's hook timeout it derives from
}

// NoDeadline is for a run with no client waiting (gate run).
var NoDeadline = Deadline{}

// HookTimeout is a registration's hook timeout: registered (--timeout) when
// set, else the client's default, Claude Code's for a name of none.
func HookTimeout(name string, registered time.Duration) time.Duration {
	if registered > 0 {
		return registered
	}
	if c := client.Named(name); c != nil {
		return c.Timeout
	}
	return client.Claude.Timeout
}

// Margin is how long before the hook timeout validators are killed: time
// to kill them and answer, 5 s, or half of a short timeout.
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
