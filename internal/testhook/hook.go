package testhook

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/queue"
)

// Events are the hook events testhook handles (hook.Handles).
var Events = hook.Handles[hook.Testhook]

func runHook(env *cli.Env, configFile string, opt client.Options) error {
	// Read here, not by client.Decode: promptID needs the bytes too.
	data, err := client.Read(env.Stdin)
	if err != nil {
		return err
	}
	in, err := client.Parse(data, opt, Events...)
	if errors.Is(err, client.ErrIgnored) {
		return nil
	}
	if err != nil {
		return err
	}
	ans := hook.AnswerTo(env.Stdout, in)
	switch in.HookEventName {
	case hook.UserPromptSubmit:
		return promptHook(env, ans, configFile, in, promptID(data))
	case hook.Stop:
		return stopHook(env, ans, configFile, in, promptID(data))
	}
	return nil
}

// promptID returns the input's prompt_id (Codex: turn_id), the same for a
// prompt's UserPromptSubmit and every Stop of the turn it starts.
func promptID(data []byte) string {
	var v struct {
		PromptID string `json:"prompt_id"`
		TurnID   string `json:"turn_id"`
	}
	json.Unmarshal(data, &v)
	return cmp.Or(v.PromptID, v.TurnID)
}

// hookRunner is newRunner for a hook input.
func hookRunner(env *cli.Env, ans hook.Answer, configFile string, in *hook.Input, turn string) (*runner, error) {
	r, err := newRunner(env, configFile, in.Cwd)
	if err == nil {
		r.session, r.hook, r.turn, r.answer = in.SessionID, true, turn, ans
	}
	return r, err
}

// promptHook answers a prompt. Anything that is not a runner command is
// left alone before the disk is touched: this runs on every prompt.
func promptHook(env *cli.Env, ans hook.Answer, configFile string, in *hook.Input, turn string) error {
	req, ok, perr := parsePrompt(in.Prompt)
	if !ok {
		return nil
	}
	r, err := hookRunner(env, ans, configFile, in, turn)
	switch {
	case err != nil && req.slash:
		return ans.Write(hook.Block("testhook: " + err.Error()))
	case err != nil:
		return err
	case perr != nil:
		return ans.Write(hook.Block("testhook: " + perr.Error() + "\nusage: " + SlashCommand + " [--category C] [--tag T] [--file F] [--auto]"))
	}
	lead := "cannot start the run"
	if !req.slash {
		st, err := loadRun(runFile(r.store.dir, r.session))
		if err != nil {
			return err
		}
		if st == nil || !applies(st, req) {
			return nil
		}
		r.seen, lead = st, ""
	}
	rep, err := r.do(req)
	if err != nil {
		return ans.Write(hook.Block(errText(lead, err)))
	}
	if rep.context == "" {
		return ans.Write(hook.Block(rep.text))
	}
	// The agent gets the test; /run-tests --auto also tells the person.
	out := hook.Context(hook.UserPromptSubmit, rep.context)
	if req.slash {
		out.SystemMessage = rep.text
	}
	return ans.Write(out)
}

// applies says whether a typed word is the runner's, given the session's
// run: every word while it runs; once it is over, only the words that look
// at it (and retry, which can reopen a completed run). Otherwise "next" or
// "skip" is the person talking to the agent.
func applies(st *State, req request) bool {
	if req.name == "retry" && len(req.args) == 1 && st.index(req.args[0]) < 0 {
		return false // "retry parsing": not a test of this run
	}
	looks := req.name == "status" || req.name == "report" || req.name == "vars"
	switch st.Mode {
	case Running:
		return true
	case Completed:
		return looks || req.name == "retry" && (len(req.args) == 1 || st.lastRetryable() >= 0)
	}
	return looks
}

// stopHook takes a main-thread Stop. Once the session has a run, every
// error halts it rather than let the stop through (fail closed).
func stopHook(env *cli.Env, ans hook.Answer, configFile string, in *hook.Input, turn string) (err error) {
	r, err := hookRunner(env, ans, configFile, in, turn)
	if err != nil {
		return err
	}
	// Without the lock: no run is the common case.
	st, err := loadRun(runFile(r.store.dir, r.session))
	if err != nil || st == nil {
		return haltRun(env, ans, err)
	}
	defer func() {
		if p := recover(); p != nil {
			err = haltRun(env, ans, fmt.Errorf("internal error (a bug in stopgate): %v", p))
		}
	}()
	// The gate judges a stop while it has entries pending: its block, or its
	// pass, must not be mixed with a test's answer (docs/testhook.md).
	if !r.answers(st) || queue.Open(r.store.dir).HasPending(queue.Scope{Session: r.session}) {
		return nil
	}
	return haltRun(env, ans, r.stopAnswer(in, st.Auto))
}

// haltRun answers a stop that a run under way could not judge, when err is
// not nil: the session halts and the user sees why, rather than the stop
// passing with the run's answer lost.
func haltRun(env *cli.Env, ans hook.Answer, err error) error {
	if err == nil {
		return nil
	}
	fmt.Fprintf(env.Stderr, "testhook: %v\n", err)
	return ans.Write(hook.Halt(errText("the test run under way could not record this stop", err) +
		"\nFix the cause (the state dir must be readable and writable; its lock free), then continue the session: the run goes on from where it was."))
}

// answers reports whether this stop's final message answers st's current
// test: one was handed out, in this turn when the turn is known.
func (r *runner) answers(st *State) bool {
	return st.current() != nil && st.Issued && (st.Turn == "" || r.turn == "" || st.Turn == r.turn)
}

// errText is an error as the person reads it in Claude Code: the message,
// then its hint lines.
func errText(lead string, err error) string {
	if lead != "" {
		lead += ": "
	}
	lines := []string{"testhook: " + lead + err.Error()}
	var h *cli.Hinted
	if errors.As(err, &h) {
		lines = append(lines, h.Hints...)
	}
	return strings.Join(lines, "\n")
}

// maxKept bounds the agent's answer kept at Stop for a later validate.
const maxKept = 1 << 20

// stopAnswer takes the final message of a stop that answers the current
// test, in a run that is auto or not as the caller saw it: a manual run
// keeps it for "validate"; an auto run records it and, while tests remain,
// blocks the stop with the next one. Claude Code overrides a hook after
// CLAUDE_CODE_STOP_HOOK_BLOCK_CAP consecutive blocks, so the run blocks at
// most cap-1 times in a row, then pauses: it lets the stop through and
// says so (docs/testhook.md). stop_hook_active false restarts the count.
func (r *runner) stopAnswer(in *hook.Input, auto bool) error {
	now := r.now()
	took := false
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
		took = true
		judged, skipped = st.validate(in.LastAssistantMessage, now)
		switch {
		case st.Mode == Completed:
			st.Streak = 0
		case prior+1 >= r.perTurn():
			st.Streak, st.Paused, st.Pauses = 0, true, append(st.Pauses, judged)
		default:
			st.Streak, st.Issued, st.Turn, st.Since = prior+1, true, r.turn, now
		}
		return st, nil
	})
	switch {
	case err != nil || !took:
		return err
	case st.Mode == Completed:
		msg := fmt.Sprintf("stopgate testhook: %s. %s", resultLine(st, judged), r.endText(st))
		if note := r.finish(st); note != "" {
			msg += " " + note
		}
		return r.answer.Write(hook.Output{SystemMessage: msg})
	case st.Paused:
		return r.answer.Write(hook.Output{SystemMessage: fmt.Sprintf(
			"stopgate testhook: %s. The run pauses here, after %s in a row, before Claude Code's cap of %d consecutive blocked stops (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP) cuts it off. Progress: %s. Type next to go on with %s.",
			resultLine(st, judged), cli.Plural(r.perTurn(), "test", "tests"), r.blockCap, st.counts(), st.testLine(st.Current))})
	}
	lead := resultLine(st, judged) + "."
	for _, i := range skipped {
		lead += "\n" + resultLine(st, i) + "."
	}
	return r.answer.Write(hook.Block(r.brief(st, lead)))
}
