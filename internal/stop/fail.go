package stop

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/queue"
)

// The errors of a stop with something armed are values, so that the advice
// of its halt (failReason) follows what happened, not how a message reads.

// interruptedError is a signal received while validators ran: their
// process groups were killed before the gate answered.
type interruptedError struct{ sig os.Signal }

func (e *interruptedError) Error() string {
	return fmt.Sprintf("interrupted by %s while the validators ran; they were killed, with every process they started", cli.SignalName(e.sig))
}

// unrecordedError is a verdict the gate reached but could not record in
// the state dir: a block without its count could loop without end.
type unrecordedError struct {
	err     error
	verdict *Verdict
}

func (e *unrecordedError) Error() string {
	return fmt.Sprintf("the checks ran, but their result could not be recorded: %v", e.err)
}
func (e *unrecordedError) Unwrap() error { return e.err }

// panicError is a bug in stopgate, recovered.
type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string {
	return fmt.Sprintf("internal error (a bug in stopgate): %v", e.value)
}

// interruptible returns a context cancelled by SIGTERM, SIGINT or SIGHUP
// (the client's timeout, a closed terminal) with an *interruptedError,
// which kills running validators; release stops listening.
func interruptible() (ctx context.Context, release func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-ch:
			cancel(&interruptedError{sig: sig})
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
}

// failReason is the halt's reason for a stop the gate could not judge:
// what failed, what the human should do, and what is armed.
func failReason(err error, armed []queue.Entry) string {
	var b strings.Builder
	fmt.Fprintf(&b, "stopgate halted the session: it could not judge this stop: %s.\n", err)
	b.WriteString(advice(err))
	if len(armed) > 0 {
		var names []string
		for _, e := range armed {
			names = append(names, fmt.Sprintf("%q", e.Prompt))
		}
		fmt.Fprintf(&b, "\nArmed for this session: prompt %s. They stay armed and are judged at the next stop.", strings.Join(names, ", "))
	} else {
		b.WriteString("\nWhat is armed for this session could not be read; a stop is judged once it can be.")
	}
	var u *unrecordedError
	if errors.As(err, &u) && u.verdict.Kind != Pass {
		b.WriteString("\n\nThe checks' own verdict:\n" + u.verdict.Reason)
	}
	return b.String()
}

// advice is what the human should do about err.
func advice(err error) string {
	var held *queue.HeldError
	var intr *interruptedError
	var bug *panicError
	switch {
	case errors.As(err, &held):
		return "End the process holding the lock (`gate status` names it; stopgate's own hooks hold it for milliseconds), then continue the session."
	case errors.As(err, &intr):
		return "If the client's hook timeout stopped the gate, raise the Stop hook's timeout in .claude/settings.json or make the validators faster; then continue the session."
	case errors.As(err, &bug):
		return "Please report this with the stack trace the gate printed on stderr (the client's debug log has it)."
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "Free space on the disk that holds the state dir, then continue the session."
	case errors.Is(err, syscall.EROFS), errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		return "Make the state dir (settings.state_dir, tmp/validation by default) writable by the user that runs the agent, then continue the session."
	case errors.Is(err, queue.ErrNotRegular):
		return "Remove the state dir's lock (stopgate creates it again as a plain file), then continue the session."
	}
	return "Fix the cause above (`gate status` shows what is armed), then continue the session."
}
