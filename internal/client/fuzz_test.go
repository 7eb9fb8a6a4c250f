package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/hook"
)

// FuzzParse: whatever arrives on stdin, in whichever dialect it is registered for,
// Parse never panics; it fails with one line and no input, or returns an input with
// an event it was asked for and a session, whose every answer encodes to one JSON
// object. Seeds: each client's captured shapes.
func FuzzParse(f *testing.F) {
	for _, s := range []string{geminiAfterAgent, geminiAfterTool, geminiMany, geminiBeforeTool, geminiShell, geminiPrompt,
		codexStop, codexSubagent, codexPostBash, codexPreBash, codexApplyPatch, codexPromptInput,
		copilotAgentStop, copilotChildStop, copilotSubagentStop, copilotPostView, copilotPreCreate, copilotPreBashText,
		copilotPrompt, copilotChildView, copilotClaudeRead, opencodeRead, opencodeWrite, opencodeStop} {
		f.Add([]byte(s))
	}
	events := [][]string{nil, {hook.Stop, hook.SubagentStop}, {hook.PostToolUse, hook.PreToolUse, hook.UserPromptSubmit}}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, client := range append([]string{""}, Names...) {
			for _, evs := range events {
				in, err := Parse(data, Options{Client: client}, evs...)
				if err != nil {
					if in != nil {
						t.Fatalf("both an input and an error: %v", err)
					}
					if msg := err.Error(); msg == "" || strings.ContainsAny(msg, "\r\n") {
						t.Fatalf("error is not one line: %q", msg)
					}
					var mm *MismatchError
					if errors.As(err, &mm) && mm.Input != nil {
						in = mm.Input // it is answered too: the gate halts in its shape
					} else {
						continue
					}
				}
				if in.HookEventName == "" || in.SessionID == "" {
					t.Fatalf("accepted without event or session: %+v", in)
				}
				if len(evs) > 0 && !slices.Contains(evs, in.HookEventName) {
					t.Fatalf("accepted event %q outside %v", in.HookEventName, evs)
				}
				for _, o := range []hook.Output{hook.Block("r"), hook.Halt("r"), hook.Deny(hook.PreToolUse, "r"), hook.Context(in.HookEventName, "c")} {
					var buf bytes.Buffer
					if err := hook.AnswerTo(&buf, in).Write(o); err != nil {
						t.Fatal(err)
					}
					if buf.Len() > 0 && !json.Valid(buf.Bytes()) {
						t.Fatalf("answer is not JSON: %q", buf.String())
					}
				}
			}
		}
	})
}
