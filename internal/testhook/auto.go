package testhook

import (
	"fmt"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/hook"
)

// The self-driving run. Each Stop of the session's main thread carries the
// agent's final message: it is the current test's answer. The runner
// records it and, while tests remain, blocks the stop with the next test's
// action, so the agent goes straight on.
//
// Claude Code allows CLAUDE_CODE_STOP_HOOK_BLOCK_CAP (9) consecutive
// blocked stops and overrides the hook at the next one, ending the turn
// with a test handed out but never done. The run never lets that happen: it
// blocks at most cap-1 times in a row (one in reserve, for a block of the
// gate's it cannot see), then records the answer, lets the stop through and
// says so (a pause); "next" starts the next turn. stop_hook_active false
// means the stop does not follow a block, so the count starts again.

// maxKept bounds the agent's answer kept at Stop for a later validate.
const maxKept = 1 << 20

type autoOutcome int

const (
	autoNone autoOutcome = iota // nothing to do: the run changed under us
	autoBlock
	autoPause
	autoDone
)

// stopAnswer takes the final message of a stop that answers the current
// test, in a run that is auto or not as the caller saw it: a manual run
// keeps it for "validate"; an auto run records it and goes on (above).
func (r *runner) stopAnswer(in *hook.Input, auto bool) error {
	now := r.now()
	var outcome autoOutcome
	var judged int
	var skipped []int
	st, err := r.store.Update(r.session, func(st *State) (*State, error) {
		if st == nil || !r.answers(st) || st.Auto != auto {
			return nil, nil
		}
		if !auto {
			st.Answer = cli.Clip(in.LastAssistantMessage, maxKept, clipped)
			return st, nil
		}
		prior := 0
		if in.StopHookActive {
			prior = st.Streak
		}
		judged, skipped = st.validate(in.LastAssistantMessage, now)
		switch {
		case st.Mode == Completed:
			st.Streak, outcome = 0, autoDone
		case prior+1 >= r.perTurn():
			st.Streak, st.Paused, outcome = 0, true, autoPause
			st.Pauses = append(st.Pauses, judged)
		default:
			st.Streak, st.Issued, st.Turn, st.Since, outcome = prior+1, true, r.turn, now, autoBlock
		}
		return st, nil
	})
	if err != nil {
		return err
	}
	switch outcome {
	case autoBlock:
		lead := resultLine(st, judged) + "."
		for _, i := range skipped {
			lead += "\n" + resultLine(st, i) + "."
		}
		return r.answer.Write(hook.Block(r.brief(st, lead)))
	case autoPause:
		return r.answer.Write(hook.Output{SystemMessage: fmt.Sprintf(
			"stopgate testhook: %s. The run pauses here, after %s in a row, before Claude Code's cap of %d consecutive blocked stops (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP) cuts it off. Progress: %s. Type next to go on with %s.",
			resultLine(st, judged), count(r.perTurn(), "test"), r.blockCap, st.counts(), st.testLine(st.Current))})
	case autoDone:
		msg := fmt.Sprintf("stopgate testhook: %s. %s", resultLine(st, judged), r.endText(st))
		if note := r.finish(st); note != "" {
			msg += " " + note
		}
		return r.answer.Write(hook.Output{SystemMessage: msg})
	}
	return nil
}
