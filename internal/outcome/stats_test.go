package outcome

import (
	"testing"
	"time"
)

func TestSummarize(t *testing.T) {
	t0 := time.Date(2025, 1, 2, 10, 0, 0, 0, time.UTC)
	ms := func(n float64) float64 { return n }
	check := func(name, prompt string, passed bool, d float64) Check {
		return Check{Name: name, Prompts: []string{prompt}, Passed: passed, DurationMS: ms(d)}
	}
	records := []Record{
		// s1 main: joke fails twice, then passes: 3 attempts.
		{Time: t0, Session: "s1", Prompts: []string{"joke"}, Decision: Block, Checks: []Check{check("joke-file", "joke", false, 1), check("joke-short", "joke", true, 2)}},
		{Time: t0.Add(time.Minute), Session: "s1", Prompts: []string{"joke"}, Decision: Block, Checks: []Check{check("joke-file", "joke", true, 1), check("joke-short", "joke", false, 4)}},
		{Time: t0.Add(2 * time.Minute), Session: "s1", Prompts: []string{"joke", "wt"}, Decision: Block, Checks: []Check{check("joke-file", "joke", true, 1), check("joke-short", "joke", true, 3), check("worktree", "wt", false, 900)}},
		// s1's agent: wt passes at once.
		{Time: t0.Add(3 * time.Minute), Session: "s1", Agent: "a1", Prompts: []string{"wt"}, Decision: Pass, Checks: []Check{check("worktree", "wt", true, 300)}},
		// s2: wt halts, never resolved; an unmapped prompt is not counted.
		{Time: t0.Add(4 * time.Minute), Session: "s2", Prompts: []string{"wt", "gone"}, Decision: Halt, Checks: []Check{check("worktree", "wt", false, 100)}},
	}
	st := Summarize(records)

	if st.Decisions != 5 || st.Passes != 1 || st.Blocks != 3 || st.Halts != 1 || !st.From.Equal(t0) || !st.To.Equal(t0.Add(4*time.Minute)) {
		t.Errorf("totals: %+v", st)
	}
	wantPrompts := []PromptStats{
		{Prompt: "joke", Checked: 3, Passed: 1, Resolved: 1, AttemptsTotal: 3, AttemptsAvg: 3, AttemptsMax: 3},
		{Prompt: "wt", Checked: 3, Passed: 1, Resolved: 1, Unresolved: 2, AttemptsTotal: 1, AttemptsAvg: 1, AttemptsMax: 1},
	}
	if len(st.Prompts) != len(wantPrompts) {
		t.Fatalf("prompts: %+v", st.Prompts)
	}
	for i, w := range wantPrompts {
		if st.Prompts[i] != w {
			t.Errorf("prompt %d: %+v\nwant      %+v", i, st.Prompts[i], w)
		}
	}
	if got := st.Prompts[0].AttemptsAvg; got != 3 {
		t.Errorf("joke attempts avg %v, want 3", got)
	}

	v := map[string]ValidatorStats{}
	for _, x := range st.Validators {
		v[x.Name] = x
	}
	if x := v["joke-short"]; x.Runs != 3 || x.Passed != 2 || x.Median != 3*time.Millisecond || x.Max != 4*time.Millisecond {
		t.Errorf("joke-short: %+v median %v max %v", x, x.Median, x.Max)
	}
	if slow := st.Slowest(); slow[0].Name != "worktree" || slow[0].Max != 900*time.Millisecond {
		t.Errorf("slowest: %+v", slow[0])
	}
	if s := st.Sessions; len(s) != 2 || s[0] != (SessionStats{Session: "s1", Decisions: 4, Blocks: 3}) || s[1] != (SessionStats{Session: "s2", Decisions: 1, Halts: 1}) {
		t.Errorf("sessions: %+v", s)
	}
}

func TestSummarizeEmpty(t *testing.T) {
	st := Summarize(nil)
	if st.Decisions != 0 || len(st.Prompts) != 0 || len(st.Slowest()) != 0 {
		t.Errorf("Summarize(nil) = %+v", st)
	}
}
