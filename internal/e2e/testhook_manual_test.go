package e2e

import (
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// greetings is a suite in the seed format (tests/functional/tests.json).
const greetings = `{
  "version": "1.0",
  "description": "greetings",
  "tests": [
    {"id": "hello", "description": "Say hello", "category": "basics",
     "action": "Say hello to stopgate.", "expect": [{"contains": "Hello"}, {"regex": "(?i)stopgate"}]},
    {"id": "finished", "description": "The answer is finished", "category": "basics",
     "action": "Write one finished sentence.", "expect": [{"not_contains": "TODO"}]}
  ]
}`

// TestTesthookByHand: a seed-format suite run by hand, prompt by prompt in one session,
// as a person types the runner's words into Claude Code. /run-tests starts the run and
// "validate" checks an answer: testhook blocks those prompts with its answer for the
// person, and no model request is made. "next" hands the agent the current test as
// context; the agent's answer is kept at its Stop. The run ends with the report.
func TestTesthookByHand(t *testing.T) {
	p := NewStopgateProject(t)
	p.WriteFile("tests/functional/tests.json", greetings)
	api := Start(t, Anthropic, Script{
		When(LastHas("Test 2/2: finished"), Text("TODO: finish this sentence")),
		When(LastHas("Test 1/2: hello"), Text("Hello, stopgate!")),
	})

	steps := []struct {
		prompt   string
		requests int    // model requests the prompt causes
		user     string // in testhook's block reason, shown to the person
		model    string // told to the model
	}{
		{"/run-tests", 0, "Started a run of 2 tests from tests/functional/tests.json", ""},
		{"next", 1, "", "stopgate test run, Test 1/2: hello — Say hello\n\nSay hello to stopgate."},
		{"validate", 0, "PASS hello (1/2)", ""},
		{"n", 1, "", "stopgate test run, Test 2/2: finished"},
		{"v", 0, "FAIL finished (2/2)\n  - contains \"TODO\", which it must not", ""},
	}
	session := ""
	for _, s := range steps {
		var r *Result
		if session == "" {
			r = p.Run(api, s.prompt)
			session = r.SessionID
		} else {
			r = p.Resume(api, session, s.prompt)
		}
		if r.SessionID != session {
			r.Fatalf("%q ran in session %s, want %s", s.prompt, r.SessionID, session)
		}
		if len(r.Requests) != s.requests {
			r.Errorf("%q: %d model requests, want %d", s.prompt, len(r.Requests), s.requests)
		}
		if s.user != "" {
			if !strings.Contains(promptBlock(r), s.user) {
				r.Errorf("%q: testhook's answer %q lacks %q", s.prompt, promptBlock(r), s.user)
			}
			// What the person sees: the client's result for a blocked prompt.
			if !strings.HasPrefix(r.Final.Result, "UserPromptSubmit operation blocked by hook:") ||
				!strings.Contains(r.Final.Result, s.user) || r.Final.NumTurns != 0 {
				r.Errorf("%q: result %+v, want the prompt blocked with %q and no turn", s.prompt, r.Final, s.user)
			}
		} else if r.Final.TerminalReason != "completed" {
			r.Errorf("%q: terminal_reason %q, want completed", s.prompt, r.Final.TerminalReason)
		}
		if s.model != "" && !r.Told(s.model) {
			r.Errorf("%q: the model was not told %q", s.prompt, s.model)
		}
		r.CheckHooks()
	}

	report := p.ReadFile("tests/functional/report.md")
	for _, want := range []string{"# Test report: greetings", "**2 tests: 1 passed, 1 failed, 0 skipped.**", "TODO: finish this sentence"} {
		if !strings.Contains(report, want) {
			t.Errorf("tests/functional/report.md lacks %q:\n%s", want, report)
		}
	}
}

// promptBlock returns the reason of the UserPromptSubmit block in r, or "".
func promptBlock(r *Result) string {
	for _, o := range r.HookOutputs() {
		if o.Event == "UserPromptSubmit" && o.Output["decision"] == "block" {
			reason, _ := o.Output["reason"].(string)
			return reason
		}
	}
	return ""
}
