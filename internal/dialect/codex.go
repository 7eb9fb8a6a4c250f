package dialect

import (
	"encoding/json"

	"github.com/stopgate/stopgate/internal/hook"
)

// codex is OpenAI Codex: its events and fields are Claude Code's, with
// turn_id and model added. It has no read tool: a PostToolUse of Bash
// reads what the guard's dry run of its command reads (detect asks
// guard.ShellReads, as for every client's shell tool); apply_patch writes the
// files its patch names, each judged by the guard as a Write. It honours
// Claude Code's answers as they are (decision block with a reason,
// continue:false, permissionDecision deny), so they are written unchanged.
type codex struct{}

func (codex) Name() string { return Codex }

func (codex) Encode(_ string, o hook.Output) any { return o }

// Halt: Codex ends the session on a halt but shows only "hook: Stop
// Stopped" (neither stopReason nor systemMessage reaches the user), so a
// stop's halt is first a block that relays its reason through the model,
// once; the next failing stop is the halt itself.
func (codex) Halt(reason string, relayed bool) (hook.Output, bool) {
	if relayed {
		return hook.Halt(reason), false
	}
	return hook.Block(hook.HaltRelay(reason)), true
}

func decodeCodex(data []byte) (*hook.Input, error) {
	in, err := hook.Unmarshal(data)
	if err != nil {
		return nil, err
	}
	in.Client, in.ClientEvent = codex{}, in.HookEventName
	if in.ToolName == "apply_patch" {
		// Codex's own tool, whose input hook.Unmarshal leaves alone: only
		// the files its patch writes matter, as guard calls.
		var ti struct {
			Command string `json:"command"`
		}
		json.Unmarshal(in.ToolInput, &ti)
		in.Calls = writes(PatchFiles(ti.Command))
	}
	return in, nil
}

// writes returns a guard call of Write for each file.
func writes(files []string) []hook.Call {
	calls := []hook.Call{}
	for _, f := range files {
		calls = append(calls, hook.Call{Tool: "Write", Input: hook.ToolInput{FilePath: f}})
	}
	return calls
}
