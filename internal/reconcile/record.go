package reconcile

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/transcript"
)

// The seal ties a mark to the transcript, but it is no secret: an agent
// can read its own transcript and seal any offset. So each claim of a
// mark is also checked against the client's record of the scope's stops,
// which the client writes after the stop's hooks ran and the agent cannot
// write: the gate writes a mark during a stop, so the first stop the
// client records after a claimed offset is the stop that claimed it.
//
//   - Offset (everything before it passed) needs that stop to be one the
//     gate ran at and neither blocked nor halted;
//   - Passed[p] (p passed at a stop that blocked on others) needs it to
//     be such a pass too, or a block of the gate whose complete reason
//     does not name p among the failures.
//
// A claim before the part of the transcript the scan read (MaxScan) is
// not checked: the scan judges every mapping then, whatever it claims.

// BlockClose follows the last failure of the gate's block reason: a
// reason that holds it names every prompt that failed (passedAt).
const BlockClose = "\nFix each failure above, then finish again."

// FailurePrefix starts the line of each failing check in a reason; a
// validator's output lines are indented, so only the gate writes it.
const FailurePrefix = "✘ prompt "

// recorded returns why the claims of m do not match the stops the scan
// res found in the record of event's scope; "" when they all do.
func recorded(m queue.Mark, res *transcript.Result, event string) string {
	if m.Offset > 0 && m.Offset >= res.From {
		if passed, _ := stopAfter(res.Stops, m.Offset, event); !passed {
			return fmt.Sprintf("the client's record shows no stop the gate passed after its offset %d", m.Offset)
		}
	}
	for _, p := range slices.Sorted(maps.Keys(m.Passed)) {
		off := m.Passed[p]
		if off <= m.Offset || off < res.From {
			continue // claims nothing the Offset does not
		}
		if passed, reason := stopAfter(res.Stops, off, event); !passed && !passedAt(reason, p) {
			return fmt.Sprintf("the client's record shows no stop after offset %d at which prompt %q passed", off, p)
		}
	}
	return ""
}

// stopAfter reads the client's record of the first stop at or after off:
// passed when the gate ran and neither blocked nor halted, else the gate's
// block reason, if it blocked. No record at all is neither.
func stopAfter(stops []transcript.Stop, off int64, event string) (passed bool, blocked string) {
	for _, s := range stops {
		if s.Offset < off || !s.Summary && s.Event != event {
			continue
		}
		for _, e := range s.Errors {
			if strings.HasPrefix(e, "stopgate:") {
				return false, e
			}
		}
		if s.Summary {
			return !s.Prevented && ranGate(s.Commands), ""
		}
		// Another hook's block: the summary after it tells the gate's part.
	}
	return false, ""
}

// ranGate reports whether the gate was among the hooks the client ran.
func ranGate(commands []string) bool {
	return slices.ContainsFunc(commands, func(c string) bool { return settings.Program(c) == hook.Gate })
}

// passedAt reports whether a block reason of the gate shows prompt p
// passed: the reason is whole (it reaches the words that follow the last
// failure) and no failure names p.
func passedAt(reason, p string) bool {
	if !strings.HasPrefix(reason, hook.BlockPrefix) || !strings.Contains(reason, BlockClose) {
		return false
	}
	failures, _, _ := strings.Cut(reason, BlockClose)
	q := strconv.Quote(p)
	for _, line := range strings.Split(failures, "\n") {
		if strings.HasPrefix(line, FailurePrefix) && strings.Contains(line, q) {
			return false
		}
	}
	return true
}

// recordWait bounds how long a stop waits for a client's record to catch
// up with it. Claude Code (2.1.328) queues its transcript appends and
// writes them every 100 ms, and does not wait for them before it runs the
// Stop hooks: the file of a short first turn was seen not to exist yet (6
// runs in 30), and an existing one to lack the turn's last lines, its
// final reply and often what came before it (about one stop in four, for
// some tens of milliseconds).
const recordWait = 3 * time.Second

// awaitRecord scans the record until it is there (when missing says a
// record not on disk is waited for) and current, or until min(wait,
// now+recordWait), scanning every 10 ms; it reports whether the record
// came to be current. A stop whose record caught up scans once.
func awaitRecord(scan func() (*transcript.Result, error), in *hook.Input, missing bool, wait time.Time) (*transcript.Result, bool, error) {
	until := time.Now().Add(recordWait)
	if !wait.IsZero() && wait.Before(until) {
		until = wait
	}
	for {
		res, err := scan()
		out := time.Now().After(until)
		switch {
		case errors.Is(err, fs.ErrNotExist) && missing && !out:
		case err != nil:
			return res, false, err
		case current(in, res, out):
			return res, true, nil
		case out:
			return res, false, nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// current reports whether res shows the reply the stop follows, as the
// client hands it to the stop (last_assistant_message): its last reply
// since its last stop summary (transcript.Result.Last, Replied). Once the
// wait is out, the client has written what it queued (every 100 ms), and
// its last reply anywhere will do: a model that answered a block with
// nothing makes no new one, and the stop follows the reply before the
// block. Only Claude Code's record is read so; with no reply text (an
// empty one) there is nothing to look for.
func current(in *hook.Input, res *transcript.Result, out bool) bool {
	want := transcript.TrimReply(in.LastAssistantMessage)
	return in.Client != nil || want == "" || res.Last == want && (res.Replied || out)
}
