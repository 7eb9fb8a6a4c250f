package stopgate_test

import (
	"encoding/json"
	"os"
	"strings"

	"github.com/rogpeppe/go-internal/testscript"
)

// recordstop [-agent ID] FILE appends to the transcript FILE what Claude
// Code (2.1.x, as internal/e2e captured it) records after a stop whose
// gate answered with the last command's stdout: for a block, the feedback
// line, a hook_blocking_error attachment and a stop_hook_summary with the
// reason; for a halt, a summary with preventedContinuation; for a pass, a
// bare summary. A subagent's stop (-agent) is recorded only when it
// blocks, in its thread, as the client does.
func cmdRecordStop(ts *testscript.TestScript, neg bool, args []string) {
	agent := ""
	if len(args) == 3 && args[0] == "-agent" {
		agent, args = args[1], args[2:]
	}
	if neg || len(args) != 1 {
		ts.Fatalf("usage: recordstop [-agent ID] FILE")
	}
	var answer struct {
		Decision   string `json:"decision"`
		Reason     string `json:"reason"`
		Continue   *bool  `json:"continue"`
		StopReason string `json:"stopReason"`
	}
	if out := strings.TrimSpace(ts.ReadFile("stdout")); out != "" {
		ts.Check(json.Unmarshal([]byte(out), &answer))
	}
	const gate = `"$CLAUDE_PROJECT_DIR"/bin/gate --timeout 600`
	event := "Stop"
	thread := map[string]any{"isSidechain": false}
	if agent != "" {
		event = "SubagentStop"
		thread = map[string]any{"isSidechain": true, "agentId": agent}
	}
	line := func(fields map[string]any) string {
		for k, v := range thread {
			fields[k] = v
		}
		data, err := json.Marshal(fields)
		ts.Check(err)
		return string(data) + "\n"
	}
	summary := map[string]any{"type": "system", "subtype": "stop_hook_summary", "hookCount": 1,
		"hookInfos": []map[string]any{{"command": gate, "durationMs": 1}}, "hookErrors": []string{},
		"preventedContinuation": false, "stopReason": "", "level": "suggestion"}
	var lines string
	switch {
	case answer.Decision == "block":
		lines = line(map[string]any{"type": "user", "isMeta": true,
			"message": map[string]any{"role": "user", "content": "Stop hook feedback:\n" + answer.Reason}})
		lines += line(map[string]any{"type": "attachment", "attachment": map[string]any{
			"type": "hook_blocking_error", "hookName": event, "hookEvent": event,
			"blockingError": map[string]any{"blockingError": answer.Reason, "command": gate}}})
		summary["hookErrors"] = []string{answer.Reason}
	case answer.Continue != nil && !*answer.Continue:
		lines = line(map[string]any{"type": "attachment", "attachment": map[string]any{"type": "hook_stopped_continuation", "hookEvent": event}})
		summary["preventedContinuation"], summary["stopReason"] = true, answer.StopReason
	case agent != "":
		return // a subagent's passing stop leaves no record
	}
	if agent == "" {
		lines += line(summary)
	}
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_APPEND|os.O_WRONLY, 0)
	ts.Check(err)
	_, err = f.WriteString(lines)
	ts.Check(err)
	ts.Check(f.Close())
}

// reply [-agent ID] FILE TEXT appends to the transcript FILE the assistant
// line Claude Code writes for a reply of TEXT, the reply a stop then
// follows (its last_assistant_message): the gate waits for the record to
// show it.
func cmdReply(ts *testscript.TestScript, neg bool, args []string) {
	agent := ""
	if len(args) == 4 && args[0] == "-agent" {
		agent, args = args[1], args[2:]
	}
	if neg || len(args) != 2 {
		ts.Fatalf("usage: reply [-agent ID] FILE TEXT")
	}
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_APPEND|os.O_WRONLY, 0)
	ts.Check(err)
	_, err = f.Write(replyLine(ts, args[1], agent != "", agent))
	ts.Check(err)
	ts.Check(f.Close())
}

// replyLine is the transcript line of a reply of text, in a subagent's
// thread when sidechain (agent may be "" in the agent's own file).
func replyLine(ts *testscript.TestScript, text string, sidechain bool, agent string) []byte {
	fields := map[string]any{"type": "assistant", "isSidechain": sidechain,
		"message": map[string]any{"role": "assistant", "content": []map[string]any{{"type": "text", "text": text}}}}
	if agent != "" {
		fields["agentId"] = agent
	}
	data, err := json.Marshal(fields)
	ts.Check(err)
	return append(data, '\n')
}
