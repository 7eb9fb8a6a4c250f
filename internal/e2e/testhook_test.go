package e2e

import (
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/settings"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// testhookProject is the example project with testhook registered as a user would,
// beside detect and gate: on UserPromptSubmit and on Stop.
func testhookProject(t *testing.T, suite string) *Project {
	p := NewStopgateProject(t)
	testhook := `"$CLAUDE_PROJECT_DIR"/bin/testhook`
	p.Hook("UserPromptSubmit", "", testhook)
	p.Hook("Stop", "", testhook)
	p.WriteFile("tests/functional/tests.json", suite)
	return p
}

// testhookRuns counts the runs of testhook for event.
func testhookRuns(r *Result, event string) int {
	n := 0
	for _, h := range r.HookRuns() {
		if h.Event == event && settings.Program(h.Command) == "testhook" {
			n++
		}
	}
	return n
}

const authSuite = `{"version": "1", "description": "auth", "tests": [
  {"id": "login", "description": "Log in", "category": "auth", "action": "Log in as alice.",
   "expect": [{"contains": "token:"}], "save": {"token": "token: (\\S+)"}},
  {"id": "whoami", "category": "api", "action": "Call whoami with ${token}.", "expect": [{"contains": "user alice"}]},
  {"id": "delete", "category": "api", "action": "Delete the user.", "expect": [{"contains": "deleted"}]}
]}`

// TestTesthookAuto: /run-tests --auto runs a whole suite from one prompt on the real
// client. The first test reaches the model with the slash command; each stop's final
// message is checked and the next test, its variable substituted, comes back as the
// Stop hook's block reason; after the last test the stop passes, the turn completes and
// the report is written.
func TestTesthookAuto(t *testing.T) {
	p := testhookProject(t, authSuite)
	api := Start(t, Anthropic, Script{
		When(LastHas("Test 3/3: delete"), Text("It could not be removed.")),
		When(LastHas("Test 2/3: whoami"), Text("user alice")),
		When(LastHas("Test 1/3: login — Log in"), Text("Logged in. token: t0k3n")),
	})
	r := p.Run(api, "/run-tests --auto")

	for _, want := range []string{
		"A stopgate test run has started",                   // .claude/commands/run-tests.md
		"stopgate test run, Test 1/3: login — Log in",       // additionalContext of the prompt
		"PASS login (1/3).",                                 // the first block reason
		"Test 2/3: whoami\n\nCall whoami with t0k3n.",       // the saved value, substituted
		"PASS whoami (2/3).\n\nstopgate test run, Test 3/3", // the second
	} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	if r.Final.TerminalReason != "completed" {
		r.Errorf("terminal_reason %q, want completed", r.Final.TerminalReason)
	}
	if len(r.Requests) != 3 {
		r.Errorf("%d model requests, want 3 (one per test)", len(r.Requests))
	}
	if n := testhookRuns(r, "Stop"); n != 3 {
		r.Errorf("testhook ran %d times at Stop, want 3", n)
	}
	report := p.ReadFile("tests/functional/report.md")
	for _, want := range []string{"**3 tests: 2 passed, 1 failed, 0 skipped.**", "- does not contain \"deleted\"", "- `token` = `t0k3n` (saved by `login`)"} {
		if !strings.Contains(report, want) {
			r.Errorf("report.md lacks %q:\n%s", want, report)
		}
	}
	if u := Unrecognized(r.Debug); len(u) > 0 {
		r.Errorf("the client ignored output keys: %v", u)
	}
	r.CheckHooks()
}

// TestTesthookBlockCap: with CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=4 the client would end a
// turn at the fourth consecutive block. The run blocks three times, then records the
// fourth test and lets the stop through itself: the turn completes normally, never
// overridden, and test 5 waits for "next".
func TestTesthookBlockCap(t *testing.T) {
	p := testhookProject(t, `{"tests": [
  {"id": "t1", "action": "Say one.", "expect": [{"contains": "one"}]},
  {"id": "t2", "action": "Say two.", "expect": [{"contains": "two"}]},
  {"id": "t3", "action": "Say three.", "expect": [{"contains": "three"}]},
  {"id": "t4", "action": "Say four.", "expect": [{"contains": "four"}]},
  {"id": "t5", "action": "Say five.", "expect": [{"contains": "five"}]}
]}`)
	p.Env = append(p.Env, "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP=4") // the example's max_blocks is 3
	api := Start(t, Anthropic, Script{
		When(LastHas("Test 5/5"), Text("five")),
		When(LastHas("Test 4/5"), Text("four")),
		When(LastHas("Test 3/5"), Text("three")),
		When(LastHas("Test 2/5"), Text("two")),
		When(LastHas("Test 1/5"), Text("one")),
	})
	r := p.Run(api, "/run-tests --auto")

	if r.Final.TerminalReason != "completed" {
		r.Errorf("terminal_reason %q, want completed", r.Final.TerminalReason)
	}
	if len(r.Requests) != 4 || r.Told("Test 5/5") {
		r.Errorf("%d model requests; want 4, and test 5 left for the next turn", len(r.Requests))
	}
	if strings.Contains(r.Debug, "consecutive times") {
		r.Errorf("the client overrode the Stop hook")
	}
	// Stop hooks run in parallel: the client records testhook's block of a stop at once,
	// while the gate still waits for the record to show the stop's reply. It still shows
	// it, so the gate, with no prompt read, never blocks.
	if r.Told(blocked) || strings.Contains(r.Debug, blocked) {
		r.Errorf("the gate blocked a stop of the run")
	}
	run := p.ReadFile("tmp/validation/runs/" + r.SessionID + "/run.json")
	if !strings.Contains(run, `"paused": true`) || !strings.Contains(run, `"pauses": [`) {
		r.Errorf("the run did not pause:\n%s", run)
	}
	r.CheckHooks()
}

// TestTesthookStepByStep: /run-tests without --auto is answered by testhook alone: the
// prompt is blocked with the plan and no model request is made.
func TestTesthookStepByStep(t *testing.T) {
	p := testhookProject(t, authSuite)
	api := Start(t, Anthropic, Script{When(Always, Text("unexpected"))})
	r := p.Run(api, "/run-tests --category auth")

	if len(r.Requests) != 0 {
		r.Errorf("%d model requests, want none", len(r.Requests))
	}
	if !strings.Contains(p.ReadFile("tmp/validation/runs/"+r.SessionID+"/run.json"), `"mode": "running"`) {
		r.Errorf("no run was started for session %s", r.SessionID)
	}
	if !strings.Contains(r.Stdout, "Started a run of 1 test from tests/functional/tests.json (session ") {
		r.Errorf("the plan was not shown:\n%s", r.Stdout)
	}
}
