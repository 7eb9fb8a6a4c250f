package stop

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

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
	for _, c := range commands {
		if settings.Program(c) == hook.Gate {
			return true
		}
	}
	return false
}

// passedAt reports whether a block reason of the gate shows prompt p
// passed: the reason is whole (it reaches the words that follow the last
// failure) and no failure names p.
func passedAt(reason, p string) bool {
	if !strings.HasPrefix(reason, blockPrefix) || !strings.Contains(reason, blockClose) {
		return false
	}
	failures, _, _ := strings.Cut(reason, blockClose)
	q := strconv.Quote(p)
	for _, line := range strings.Split(failures, "\n") {
		if strings.HasPrefix(line, failurePrefix) && strings.Contains(line, q) {
			return false
		}
	}
	return true
}
