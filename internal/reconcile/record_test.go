package reconcile

import (
	"strings"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/transcript"
)

// TestRecorded: each claim of a mark needs the client's record of the stop
// that made it, the first stop recorded after the claimed offset.
func TestRecorded(t *testing.T) {
	const gate = `"$CLAUDE_PROJECT_DIR"/bin/gate --timeout 600`
	jokeFails := hook.BlockPrefix + ": 1 check failed.\n\n" + FailurePrefix + `"joke", validator "joke-file"` + "\n  | output/joke.txt: no such file\n" + BlockClose + " (Blocked stop 1 of 3: …)"
	otherFails := strings.ReplaceAll(jokeFails, `"joke"`, `"other"`)
	pass := transcript.Stop{Offset: 100, Summary: true, Commands: []string{gate}}
	block := func(off int64, reason string) []transcript.Stop {
		return []transcript.Stop{
			{Offset: off, Event: "Stop", Errors: []string{reason}},
			{Offset: off + 10, Summary: true, Errors: []string{reason}, Commands: []string{gate}},
		}
	}
	at := func(off int64, s transcript.Stop) transcript.Stop { s.Offset = off; return s }
	tests := []struct {
		name  string
		mark  queue.Mark
		stops []transcript.Stop
		from  int64
		want  string // "" holds; else part of why
	}{
		{"no claims", queue.Mark{}, nil, 0, ""},
		{"offset before a pass", queue.Mark{Offset: 90}, []transcript.Stop{pass}, 90, ""},
		{"offset with no stop after it", queue.Mark{Offset: 190}, []transcript.Stop{pass}, 190, "no stop the gate passed after its offset 190"},
		{"offset before a block", queue.Mark{Offset: 90}, block(100, otherFails), 90, "no stop the gate passed"},
		{"offset before a halt", queue.Mark{Offset: 90}, []transcript.Stop{{Offset: 100, Summary: true, Prevented: true, Commands: []string{gate}}}, 90, "no stop the gate passed"},
		{"offset before a stop the gate did not run at", queue.Mark{Offset: 90}, []transcript.Stop{{Offset: 100, Summary: true, Commands: []string{"bin/other"}}}, 90, "no stop the gate passed"},
		{"another hook blocked, the gate passed", queue.Mark{Offset: 90}, []transcript.Stop{
			{Offset: 100, Event: "Stop", Errors: []string{"lint: no"}},
			{Offset: 110, Summary: true, Errors: []string{"lint: no"}, Commands: []string{"bin/lint", gate}},
		}, 90, ""},
		{"a subagent's block is not the main thread's stop", queue.Mark{Offset: 90}, append([]transcript.Stop{{Offset: 95, Event: "SubagentStop", Errors: []string{otherFails}}}, at(100, pass)), 90, ""},
		{"the first stop after decides", queue.Mark{Offset: 90}, append(block(100, otherFails), at(200, pass)), 90, "no stop the gate passed"},
		{"passed at a block that names others", queue.Mark{Offset: 10, Passed: map[string]int64{"joke": 90}}, append([]transcript.Stop{at(20, pass)}, block(100, otherFails)...), 10, ""},
		{"passed at a block that names it", queue.Mark{Offset: 10, Passed: map[string]int64{"joke": 90}}, append([]transcript.Stop{at(20, pass)}, block(100, jokeFails)...), 10, `no stop after offset 90 at which prompt "joke" passed`},
		{"passed at a block cut short", queue.Mark{Passed: map[string]int64{"joke": 90}}, block(100, otherFails[:40]), 0, `prompt "joke"`},
		{"passed at a pass", queue.Mark{Passed: map[string]int64{"joke": 90}}, []transcript.Stop{pass}, 0, ""},
		{"passed with no stop after it", queue.Mark{Passed: map[string]int64{"joke": 190}}, []transcript.Stop{pass}, 0, `prompt "joke"`},
		{"claims before what the scan read are moot", queue.Mark{Offset: 90, Passed: map[string]int64{"joke": 95}}, nil, 1000, ""},
	}
	for _, tt := range tests {
		got := recorded(tt.mark, &transcript.Result{From: tt.from, Stops: tt.stops}, "Stop")
		if tt.want == "" && got != "" || tt.want != "" && !strings.Contains(got, tt.want) {
			t.Errorf("%s: recorded = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestCurrent: the record is current when its last reply since the last
// stop summary is the one the stop follows; once the wait is out, its last
// reply anywhere is (a model that answered a block with nothing).
func TestCurrent(t *testing.T) {
	since := &transcript.Result{Replied: true, Last: "Done."}
	before := &transcript.Result{Last: "Done."} // the reply sits before the last stop
	tests := []struct {
		name string
		in   hook.Input
		res  *transcript.Result
		out  bool
		want bool
	}{
		{"the reply since the stop", hook.Input{LastAssistantMessage: "Done."}, since, false, true},
		{"trimmed as the client trims", hook.Input{LastAssistantMessage: "\ufeff Done.\n"}, since, false, true},
		{"another reply", hook.Input{LastAssistantMessage: "Done!"}, since, true, false},
		{"no reply yet", hook.Input{LastAssistantMessage: "Done."}, &transcript.Result{}, true, false},
		{"the reply before the stop, waiting", hook.Input{LastAssistantMessage: "Done."}, before, false, false},
		{"the reply before the stop, the wait out", hook.Input{LastAssistantMessage: "Done."}, before, true, true},
		{"no reply text", hook.Input{LastAssistantMessage: " \ufeff"}, &transcript.Result{}, false, true},
	}
	for _, tt := range tests {
		if got := current(&tt.in, tt.res, tt.out); got != tt.want {
			t.Errorf("%s: current %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestAwaitRecordOut: a record whose reply never shows after the last stop
// is current once the wait is out when its last reply is the one wanted,
// and not when it is another.
func TestAwaitRecordOut(t *testing.T) {
	before := &transcript.Result{Last: "Done."}
	scan := func() (*transcript.Result, error) { return before, nil }
	for msg, want := range map[string]bool{"Done.": true, "Other.": false} {
		in := &hook.Input{LastAssistantMessage: msg}
		res, caught, err := awaitRecord(scan, in, false, time.Now().Add(50*time.Millisecond))
		if res != before || caught != want || err != nil {
			t.Errorf("%q: %v, %v, %v; want caught %v", msg, res, caught, err, want)
		}
	}
}
