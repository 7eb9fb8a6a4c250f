package e2e

import (
	"testing"
	"time"
)

// sampleDebug holds lines as Claude Code 2.1.328 writes them to --debug-file.
const sampleDebug = `2026-11-22T08:16:12.172Z [DEBUG] Hooks: UserPromptSubmit ["$CLAUDE_PROJECT_DIR"/bin/h ups] finished with status 0 (14ms)
2026-11-22T08:16:12.172Z [DEBUG] Hook output does not start with {, treating as plain text
2026-11-22T08:16:43.244Z [DEBUG] Hooks: PreToolUse:Read [echo '{"replace":"x"}'] finished with status 0 (15ms)
2026-11-22T08:16:43.248Z [DEBUG] Hook JSON output had unrecognized keys (ignored): replace.
2026-11-22T08:16:43.300Z [DEBUG] Hooks: PostToolUse:Read [echo oops >&2; exit 1] finished with status 1 (6ms)
2026-11-22T08:16:43.301Z [ERROR] "Hook PostToolUse:Read (PostToolUse) error: status code 1\nstderr:\noops"
2026-11-22T08:16:11.827Z [ERROR] Failed to save config with lock: Error: ENOENT: no such file or directory, lstat '/h/.claude.json'
2026-11-22T08:16:12.469Z [DEBUG] Hooks: Stop ["$CLAUDE_PROJECT_DIR"/bin/stop] finished with status 0 (15ms)
2026-11-22T08:16:12.478Z [DEBUG] Hook Stop ("$CLAUDE_PROJECT_DIR"/bin/stop) returned permissionDecision: deny (reason: XYZ)
2026-11-22T08:16:12.472Z [DEBUG] "Hook Stop (Stop) success:\n{\"decision\":\"block\",\"reason\":\"XYZ\\nsecond line\"}"
2026-11-22T08:16:12.053Z [DEBUG] hooks module cc-plugin-agents-md@builtin session.start settled in 9.4ms (native link, next() included)
`

func TestHookRuns(t *testing.T) {
	at := func(s string) time.Time {
		ts, err := time.Parse(time.RFC3339Nano, "2026-11-22T08:"+s+"Z")
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	want := []HookRun{
		{Event: "UserPromptSubmit", Matcher: "", Command: `"$CLAUDE_PROJECT_DIR"/bin/h ups`, Status: 0, Duration: 14 * time.Millisecond, End: at("16:12.172")},
		{Event: "PreToolUse", Matcher: "Read", Command: `echo '{"replace":"x"}'`, Status: 0, Duration: 15 * time.Millisecond, End: at("16:43.244")},
		{Event: "PostToolUse", Matcher: "Read", Command: `echo oops >&2; exit 1`, Status: 1, Duration: 6 * time.Millisecond, End: at("16:43.300")},
		{Event: "Stop", Matcher: "", Command: `"$CLAUDE_PROJECT_DIR"/bin/stop`, Status: 0, Duration: 15 * time.Millisecond, End: at("16:12.469")},
	}
	got := HookRuns(sampleDebug)
	if len(got) != len(want) {
		t.Fatalf("got %d runs %v, want %d", len(got), got, len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("run %d: %v, want %v", i, got[i], want[i])
		}
	}
}

func TestUnrecognizedAndHookErrors(t *testing.T) {
	if u := Unrecognized(sampleDebug); len(u) != 1 {
		t.Errorf("Unrecognized: %q", u)
	}
	if e := HookErrors(sampleDebug); len(e) != 1 || e[0][25:] != `[ERROR] "Hook PostToolUse:Read (PostToolUse) error: status code 1\nstderr:\noops"` {
		t.Errorf("HookErrors: %q", e)
	}
}

func TestHookOutputs(t *testing.T) {
	outs := HookOutputs(sampleDebug)
	if len(outs) != 1 || outs[0].Event != "Stop" || outs[0].Output["decision"] != "block" || outs[0].Output["reason"] != "XYZ\nsecond line" {
		t.Errorf("HookOutputs: %+v", outs)
	}
}

func TestOverlapping(t *testing.T) {
	ms := func(end, d int) HookRun {
		return HookRun{End: time.UnixMilli(int64(end)), Duration: time.Duration(d) * time.Millisecond}
	}
	// Three parallel Reads (the last ends after the first starts), then a lone Stop.
	runs := []HookRun{ms(130, 30), ms(150, 50), ms(170, 60), ms(400, 20)}
	got := Overlapping(runs)
	want := []int{3, 3, 3, 1}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("Overlapping = %v, want %v", got, want)
			break
		}
	}
}
