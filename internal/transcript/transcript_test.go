package transcript

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// testdata/main.jsonl and agent.jsonl are the user, assistant and system
// lines of a real session of Claude Code 2.1.328 (paths shortened to /p):
// `claude -p "/joke extra args"`, then Read, Write, Bash and a subagent that
// reads the same prompt file.

func kinds(evs []Event) string {
	var out []string
	for _, e := range evs {
		switch e.Kind {
		case Read:
			out = append(out, "read "+e.Path)
		case Command:
			out = append(out, "command "+e.Command)
		case Prompt:
			out = append(out, "prompt "+e.Text)
		}
	}
	return strings.Join(out, "; ")
}

func TestScanRealTranscripts(t *testing.T) {
	res, err := Scan("testdata/main.jsonl", 0, Thread{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := kinds(res.Events), "command joke; read /p/src/prompts/joke.md"; got != want {
		t.Errorf("main thread: %s, want %s", got, want)
	}
	fi, _ := os.Stat("testdata/main.jsonl")
	if res.End != fi.Size() || res.Skipped != 0 || res.Reset {
		t.Errorf("main thread: %+v, want the whole file read cleanly (%d bytes)", res, fi.Size())
	}
	// From just past the Read, nothing more is found.
	again, err := Scan("testdata/main.jsonl", res.Events[1].End, Thread{})
	if err != nil || len(again.Events) != 0 || again.End != res.End {
		t.Errorf("rescan from the Read's end: %+v, %v", again, err)
	}

	const agent = "a06c39d70bf6107a2"
	for _, th := range []Thread{{Agent: agent, Own: true}, {Agent: agent}} {
		res, err := Scan("testdata/agent.jsonl", 0, th)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := kinds(res.Events), "read /p/src/prompts/joke.md"; got != want {
			t.Errorf("agent %+v: %s, want %s", th, got, want)
		}
	}
	// The main thread's filter takes nothing from a subagent's lines.
	if res, _ := Scan("testdata/agent.jsonl", 0, Thread{}); len(res.Events) != 0 {
		t.Errorf("main thread in the agent's transcript: %s", kinds(res.Events))
	}
}

func write(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const (
	readLine1   = `{"type":"assistant","uuid":"a1","message":{"content":[{"type":"text","text":"ok"},{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/p/src/prompts/joke.md"}}]}}` + "\n"
	typed       = `{"type":"user","uuid":"u1","message":{"role":"user","content":"  /joke about compilers\nmore"}}` + "\n"
	typedBlocks = `{"type":"user","uuid":"u2","message":{"role":"user","content":[{"type":"text","text":"/git-worktrees-create now"}]}}` + "\n"
	quoted      = `{"type":"user","uuid":"u3","message":{"role":"user","content":"see <command-name>/joke</command-name>"}}` + "\n"
	expanded    = `{"type":"user","uuid":"u4","isMeta":true,"message":{"role":"user","content":[{"type":"text","text":"/joke\n"}]}}` + "\n"
	result      = `{"type":"user","uuid":"u5","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"<command-name>/joke</command-name>"}]}}` + "\n"
	sidechain   = `{"type":"assistant","isSidechain":true,"agentId":"x","message":{"content":[{"type":"tool_use","name":"Read","input":{"file_path":"/p/a.md"}}]}}` + "\n"
	skill       = `{"type":"assistant","uuid":"a2","message":{"content":[{"type":"tool_use","id":"t2","name":"Skill","input":{"skill":"joke","args":"about cats"}}]}}` + "\n"
	otherTool   = `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Write","input":{"file_path":"/p/Read.md"}}]}}` + "\n"
)

func TestScanLines(t *testing.T) {
	p := write(t, readLine1, typed, typedBlocks, quoted, expanded, result, sidechain, skill, otherTool,
		"not json but \"user\"\n", `{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{"file_path":7}}]}}`+"\n",
		"\n", `{"type":"user","message":{"content":"/half`)
	res, err := Scan(p, 0, Thread{})
	if err != nil {
		t.Fatal(err)
	}
	want := "read /p/src/prompts/joke.md; prompt /joke about compilers; prompt /git-worktrees-create now; command joke"
	if got := kinds(res.Events); got != want {
		t.Errorf("events:\n got %s\nwant %s", got, want)
	}
	data, _ := os.ReadFile(p)
	if half := int64(len(data)) - int64(len(`{"type":"user","message":{"content":"/half`)); res.End != half {
		t.Errorf("end %d, want %d: the unfinished last line is left for later", res.End, half)
	}
	if e := res.Events[0]; e.Offset != 0 || e.End != int64(len(readLine1)) || e.UUID != "a1" {
		t.Errorf("first event %+v", e)
	}
}

func TestScanLimits(t *testing.T) {
	defer func(s int64, l int) { MaxScan, MaxLine = s, l }(MaxScan, MaxLine)
	var lines []string
	for i := range 100 {
		lines = append(lines, fmt.Sprintf(`{"type":"assistant","message":{"content":[{"type":"tool_use","name":"Read","input":{"file_path":"/p/%03d.md"}}]}}`+"\n", i))
	}
	p := write(t, lines...)
	size := int64(100 * len(lines[0]))

	// Only the newest MaxScan bytes, from the first whole line in them.
	MaxScan = 10*int64(len(lines[0])) + 5
	res, err := Scan(p, 0, Thread{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Events) != 10 || res.Events[0].Path != "/p/090.md" || res.Skipped != size-MaxScan || res.End != size {
		t.Errorf("capped scan: %d events from %q, skipped %d, end %d", len(res.Events), res.Events[0].Path, res.Skipped, res.End)
	}

	// A line over MaxLine is skipped whole, and the scan goes on.
	MaxScan, MaxLine = 1<<20, 50
	res, err = Scan(write(t, readLine1, `{"type":"user","message":{"content":"/x"}}`+"\n"), 0, Thread{})
	if err != nil {
		t.Fatal(err)
	}
	if kinds(res.Events) != "prompt /x" {
		t.Errorf("long line: %+v", res)
	}

	// An offset past the end: the file was replaced; it is read again.
	MaxLine = 1 << 20
	res, err = Scan(p, size+10, Thread{})
	if err != nil || !res.Reset || len(res.Events) != 100 {
		t.Errorf("offset past the end: %+v, %v", res, err)
	}
}

// TestScanBlocks reads the blocks of the current turn from a transcript the
// real client (2.1.328) wrote while a Stop hook blocked every stop: it fed
// back nine blocks, then overrode the hook.
func TestScanBlocks(t *testing.T) {
	data, err := os.ReadFile("testdata/blocks.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	block := `{"isSidechain":false,"type":"attachment","attachment":{"type":"hook_blocking_error","hookName":"Stop","hookEvent":"Stop","blockingError":{"blockingError":"again","command":"gate"}}}` + "\n"
	prompt := `{"isSidechain":false,"type":"user","message":{"role":"user","content":"next task"}}` + "\n"
	toolResult := `{"isSidechain":false,"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"x"}]}}` + "\n"
	subagent := `{"isSidechain":true,"agentId":"a1","type":"attachment","attachment":{"type":"hook_blocking_error","hookEvent":"SubagentStop","blockingError":{"blockingError":"sub"}}}` + "\n"
	tests := []struct {
		name   string
		text   string
		thread Thread
		want   []Block
	}{
		{"nine blocks in one turn", string(data), Thread{}, repeat(Block{"Stop", "XYZ reason"}, 9)},
		{"a new prompt starts a new turn", string(data) + prompt, Thread{}, nil},
		{"blocks after the new prompt", string(data) + prompt + block + toolResult + block, Thread{}, repeat(Block{"Stop", "again"}, 2)},
		{"a subagent's blocks are its own", string(data) + subagent, Thread{Agent: "a1"}, []Block{{"SubagentStop", "sub"}}},
		{"the main thread ignores a subagent's", prompt + subagent, Thread{}, nil},
	}
	for _, tt := range tests {
		path := filepath.Join(t.TempDir(), "t.jsonl")
		os.WriteFile(path, []byte(tt.text), 0o644)
		res, err := Scan(path, 0, tt.thread)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Blocks, tt.want) {
			t.Errorf("%s: Blocks = %q, want %q", tt.name, res.Blocks, tt.want)
		}
	}
}

func repeat(s Block, n int) []Block {
	out := make([]Block, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// TestScanStops reads the client's records of stops from what the real
// client (2.1.x, through internal/e2e) wrote: two blocks of the gate, each
// a hook_blocking_error then a stop_hook_summary with the reason; a third;
// a halt (a summary with preventedContinuation); a pass (a bare summary).
func TestScanStops(t *testing.T) {
	res, err := Scan("testdata/stops.jsonl", 0, Thread{})
	if err != nil {
		t.Fatal(err)
	}
	type stop struct {
		offset          int64
		summary         bool
		event           string
		errors          int
		gate, prevented bool
	}
	var got []stop
	for _, s := range res.Stops {
		gate := false
		for _, c := range s.Commands {
			gate = gate || strings.Contains(c, "/bin/gate")
		}
		got = append(got, stop{s.Offset, s.Summary, s.Event, len(s.Errors), gate, s.Prevented})
	}
	want := []stop{
		{2085, false, "Stop", 1, false, false}, {3778, true, "", 1, true, false},
		{6884, false, "Stop", 1, false, false}, {8201, true, "", 1, true, false},
		{9971, false, "Stop", 1, false, false}, {11288, true, "", 1, true, false},
		{14409, true, "", 0, true, true},
		{15437, true, "", 0, true, false},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stops:\n got %v\nwant %v", got, want)
	}
	if r := res.Stops[0].Errors[0]; !strings.HasPrefix(r, "stopgate: you may not stop yet") || !strings.Contains(r, "(Blocked stop 1 of 3") {
		t.Errorf("the block's reason is not whole: %q", r)
	}
	sub, err := Scan("testdata/stops.jsonl", 0, Thread{Agent: "a1"})
	if err != nil || len(sub.Stops) != 0 {
		t.Errorf("a subagent's thread got the main thread's stops: %v %v", sub.Stops, err)
	}
}

// TestScanReply: the thread's last reply since its last stop summary or
// typed prompt, as Claude Code hands it to the stop (its text blocks,
// trimmed), which the gate waits for; and its last reply anywhere.
func TestScanReply(t *testing.T) {
	reply := func(content string) string {
		return `{"isSidechain":false,"type":"assistant","message":{"role":"assistant","content":[` + content + `]}}` + "\n"
	}
	done := reply(`{"type":"text","text":" Done.\n"}`)
	summary := `{"isSidechain":false,"type":"system","subtype":"stop_hook_summary","hookInfos":[{"command":"gate"}]}` + "\n"
	// Another hook's block of this very stop, written while the gate runs.
	blocked := `{"isSidechain":false,"type":"attachment","attachment":{"type":"hook_blocking_error","hookEvent":"Stop","blockingError":{"blockingError":"tests fail"}}}` + "\n"
	prompt := `{"isSidechain":false,"type":"user","message":{"role":"user","content":"next task"}}` + "\n"
	sub := `{"isSidechain":true,"agentId":"a1","type":"assistant","message":{"content":[{"type":"text","text":"sub"}]}}` + "\n"
	tests := []struct {
		name    string
		text    string
		thread  Thread
		reply   string
		replied bool
		last    string
	}{
		{"the last reply", reply(`{"type":"text","text":"First."}`) + done, Thread{}, "Done.", true, "Done."},
		{"text and a tool call", reply(`{"type":"text","text":"a"},{"type":"tool_use","name":"Bash","input":{}},{"type":"text","text":"b"}`), Thread{}, "a\nb", true, "a\nb"},
		{"a tool call alone", done + reply(`{"type":"tool_use","name":"Read","input":{"file_path":"/p/x.md"}}`), Thread{}, "", true, ""},
		{"a recorded stop since", done + summary, Thread{}, "", false, "Done."},
		{"another hook's block of this stop since", done + blocked, Thread{}, "Done.", true, "Done."},
		{"a block and its summary since", done + blocked + summary, Thread{}, "", false, "Done."},
		{"a typed prompt since", done + prompt, Thread{}, "", false, "Done."},
		{"a reply after the stop", done + summary + done, Thread{}, "Done.", true, "Done."},
		{"a subagent's is not the main thread's", done + summary + sub, Thread{}, "", false, "Done."},
		{"a subagent's own", done + sub, Thread{Agent: "a1"}, "sub", true, "sub"},
		{"trimmed as JavaScript trims", reply(`{"type":"text","text":"\ufeff\u00a0Done.\u2028\t"}`), Thread{}, "Done.", true, "Done."},
		{"U+0085 kept, as JavaScript keeps it", reply(`{"type":"text","text":"\u0085Done.\u0085"}`), Thread{}, "\u0085Done.\u0085", true, "\u0085Done.\u0085"},
	}
	// since is the last reply since the last stop summary or typed prompt.
	since := func(res *Result) string {
		if res.Replied {
			return res.Last
		}
		return ""
	}
	for _, tt := range tests {
		res, err := Scan(write(t, tt.text), 0, tt.thread)
		if err != nil {
			t.Fatal(err)
		}
		if since(res) != tt.reply || res.Replied != tt.replied || res.Last != tt.last {
			t.Errorf("%s: Reply %q, Replied %v, Last %q; want %q, %v, %q", tt.name, since(res), res.Replied, res.Last, tt.reply, tt.replied, tt.last)
		}
	}
	// The real client's: a session that ended with a recorded stop, and a
	// subagent's own transcript that ended with its reply.
	if res, err := Scan("testdata/main.jsonl", 0, Thread{}); err != nil || res.Replied {
		t.Errorf("main.jsonl: %+v, %v; want no reply after its last stop", res, err)
	}
	if res, err := Scan("testdata/agent.jsonl", 0, Thread{Agent: "a06c39d70bf6107a2", Own: true}); err != nil || since(res) != "sub done" {
		t.Errorf("agent.jsonl: Reply %q, %v; want %q", since(res), err, "sub done")
	}
}
