package e2e

import (
	"strings"
	"testing"

	// Dot import: scenarios read as scripts of model turns.
	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/settings"
)

// blocked starts every block reason the gate gives the model.
const blocked = "stopgate: you may not stop yet"

const joke = "There are 10 kinds of people: those who read binary and those who do not."

func read(p *Project, rel string) Part {
	return Tool("Read", map[string]any{"file_path": p.Path(rel)})
}

func writeJoke(p *Project) Part {
	return Tool("Write", map[string]any{"file_path": p.Path("output/joke.txt"), "content": joke + "\n"})
}

// playJoke runs the joke scenario on the real client: the model reads the
// mapped prompt, stops without the work, is blocked, writes the joke and
// stops again.
func playJoke(t *testing.T, p *Project) *Result {
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/joke.md")),
	})
	return p.Run(api, "Tell a joke as src/prompts/joke.md says.")
}

// gateRuns counts the runs of the gate for event.
func gateRuns(r *Result, event string) int {
	n := 0
	for _, h := range r.HookRuns() {
		if h.Event == event && settings.Program(h.Command) == hook.Gate {
			n++
		}
	}
	return n
}

// finish checks what every stopgate scenario must end with: a completed session, an
// empty queue, and hooks that were quick, quiet and error-free.
func finish(t *testing.T, p *Project, r *Result) {
	t.Helper()
	if r.Final.TerminalReason != "completed" {
		r.Errorf("terminal_reason %q, want completed", r.Final.TerminalReason)
	}
	if pending := p.Pending(); len(pending) > 0 {
		r.Errorf("entries left pending: %v", pending)
	}
	r.CheckHooks()
}

// TestJoke: reading a mapped prompt arms it; a stop without the work is blocked with the
// validators' output and fixes; after the fix the next stop passes.
func TestJoke(t *testing.T) {
	p := NewStopgateProject(t)
	r := playJoke(t, p)

	for _, want := range []string{
		`the prompt "joke" will be checked`, // detect's announcement
		blocked + ": 2 checks failed.",
		`✘ prompt "joke", validator "joke-file"`,
		"| output/joke.txt: no such file",
		"Fix: Write the joke to output/joke.txt.",
	} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	if got := p.ReadFile("output/joke.txt"); got != joke+"\n" {
		r.Errorf("output/joke.txt = %q", got)
	}
	if n := gateRuns(r, "Stop"); n != 2 {
		r.Errorf("gate ran %d times at Stop, want 2 (blocked, passed)", n)
	}
	finish(t, p, r)
}

// TestUnmappedRead: reading a file no mapping names arms nothing; the stop passes at once.
func TestUnmappedRead(t *testing.T) {
	p := NewStopgateProject(t)
	p.WriteFile("notes.md", "# Notes\n")
	api := Start(t, Anthropic, Script{
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "notes.md")),
	})
	r := p.Run(api, "Read notes.md.")

	if r.Told(blocked) || r.Told("will be checked") || len(r.Requests) != 2 {
		r.Errorf("%d model requests; want 2 and no stopgate text", len(r.Requests))
	}
	if n := gateRuns(r, "Stop"); n != 1 {
		r.Errorf("gate ran %d times at Stop, want 1", n)
	}
	finish(t, p, r)
}

// TestSlashCommand: /joke from .claude/commands arms the prompt without any Read, through
// UserPromptExpansion alone.
func TestSlashCommand(t *testing.T) {
	p := NewStopgateProject(t)
	p.Unregister("UserPromptSubmit", "detect") // it would arm /joke first and hide the expansion
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(AtTurn(0), Text("Here is a joke, in my head.")),
	})
	r := p.Run(api, "/joke about compilers")

	for _, want := range []string{
		"Write a short, original programming joke", // the command, expanded
		`the prompt "joke" will be checked`,        // detect's announcement at the expansion
		`✘ prompt "joke", validator "joke-file"`,
	} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	for _, req := range r.Requests {
		for _, m := range req.Messages {
			for _, c := range m.Calls {
				if c.Name == "Read" {
					r.Errorf("the model read a file; the command alone must arm the prompt")
				}
			}
		}
	}
	finish(t, p, r)
}

// TestSkillTool: the model runs the mapped command itself with the Skill tool. The
// client then fires neither a Read nor a UserPromptExpansion, only PostToolUse of
// Skill, and detect must arm the prompt from it.
func TestSkillTool(t *testing.T) {
	p := NewStopgateProject(t)
	p.AllowedTools = "Read Write Bash Skill"
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(ResultOf("Skill"), Text("Here is a joke, in my head.")),
		When(AtTurn(0), Tool("Skill", map[string]any{"skill": "joke"})),
	})
	r := p.Run(api, "Tell me a programming joke.")

	for _, want := range []string{
		`the prompt "joke" will be checked`, // detect's announcement after the Skill call
		`✘ prompt "joke", validator "joke-file"`,
	} {
		if !r.Told(want) {
			r.Errorf("the model was not told %q", want)
		}
	}
	for _, h := range r.HookRuns() {
		if h.Event == "UserPromptExpansion" {
			r.Errorf("a UserPromptExpansion ran; the Skill call alone must arm the prompt")
		}
	}
	finish(t, p, r)
}

// TestSubagent: a subagent that reads a mapped prompt is gated at its own SubagentStop;
// the main thread's stop does not inherit its entry.
func TestSubagent(t *testing.T) {
	p := NewStopgateProject(t)
	api := Start(t, Anthropic, Script{
		When(All(Subagent, LastHas(blocked)), writeJoke(p)),
		When(All(Subagent, ResultOf("Write")), Text("Wrote the joke.")),
		When(All(Subagent, ResultOf("Read")), Text("Done.")),
		When(Subagent, read(p, "src/prompts/joke.md")),
		When(ResultOf("Agent"), Text("The subagent told the joke.")),
		When(AtTurn(0), Tool("Agent", map[string]any{
			"description": "Tell a joke", "prompt": "Do what src/prompts/joke.md says.",
			"subagent_type": "general-purpose", "run_in_background": false,
		})),
	})
	r := p.Run(api, "Have a subagent tell a joke.")

	for _, req := range r.Requests {
		if !Subagent(req) && req.Has(blocked) {
			r.Errorf("the main thread was blocked by the subagent's prompt")
		}
	}
	if !r.Told(blocked) {
		r.Errorf("the subagent was not blocked")
	}
	if sub, main := gateRuns(r, "SubagentStop"), gateRuns(r, "Stop"); sub != 2 || main != 1 {
		r.Errorf("gate ran %d times at SubagentStop, %d at Stop; want 2 and 1", sub, main)
	}
	finish(t, p, r)
}

// TestParallelReads: several mapped prompts read in one assistant message (parallel
// tool calls, so concurrent detect runs) all arrive in the queue.
func TestParallelReads(t *testing.T) {
	p := NewStopgateProject(t)
	prompts := []string{"joke", "extra/a", "extra/b", "extra/c"}
	var reads []Part
	for _, key := range prompts {
		if key != "joke" {
			p.WriteFile("src/prompts/"+key+".md", "# "+key+"\n")
			appendFile(p, "mappings.toml", "\n[[mapping]]\nprompt = \""+key+"\"\nvalidators = [\"joke-file\"]\n")
		}
		reads = append(reads, read(p, "src/prompts/"+key+".md"))
	}
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), writeJoke(p)),
		When(ResultOf("Write"), Text("Wrote the joke.")),
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), reads...),
	})
	r := p.Run(api, "Do all four prompts.")

	n := 0
	for _, h := range r.HookRuns() {
		if h.Event == "PostToolUse" {
			n++
		}
	}
	if n != len(prompts) {
		r.Errorf("detect ran %d times after Read, want %d", n, len(prompts))
	}
	// The block names, for joke-file, every prompt that uses it.
	if want := `✘ prompt "` + strings.Join(prompts, `", "`) + `", validator "joke-file"`; !r.Told(want) {
		r.Errorf("the block did not name every prompt read: want %q", want)
	}
	finish(t, p, r)
}

// TestAlwaysFails: a validator that never passes blocks max_blocks stops, then the gate
// halts the session with the failures; the client's own cap of 9 never comes into play.
func TestAlwaysFails(t *testing.T) {
	p := doomedProject(t)
	api := Start(t, Anthropic, Script{
		When(LastHas(blocked), Text("Still done.")),
		When(ResultOf("Read"), Text("Done.")),
		When(AtTurn(0), read(p, "src/prompts/doomed.md")),
	})
	r := p.Run(api, "Do src/prompts/doomed.md.")

	if r.Final.TerminalReason != "stop_hook_prevented" {
		r.Errorf("terminal_reason %q, want stop_hook_prevented", r.Final.TerminalReason)
	}
	var decisions []string
	var halt string
	for _, o := range r.HookOutputs() {
		if o.Event != "Stop" {
			continue
		}
		if o.Output["continue"] == false {
			decisions = append(decisions, "halt")
			halt, _ = o.Output["stopReason"].(string)
		} else {
			d, _ := o.Output["decision"].(string)
			decisions = append(decisions, d)
		}
	}
	if got := strings.Join(decisions, " "); got != "block block block halt" {
		r.Errorf("gate answers %q, want 3 blocks then a halt", got)
	}
	for _, want := range []string{"stopgate halted the session: 1 check failed after 3 blocked stops.", `validator "never"`, "| never good enough"} {
		if !strings.Contains(halt, want) {
			r.Errorf("halt reason %q lacks %q", halt, want)
		}
	}
	if r.Told("stopgate halted") {
		r.Errorf("the model saw the halt reason; only the user may")
	}
	// The client's own cap announces itself in the stream: "A hook blocked the turn
	// from ending 9 consecutive times—overriding and ending turn."
	if strings.Contains(r.Stdout, "consecutive times") || len(r.Requests) != 5 {
		r.Errorf("%d model requests, want 5 (read, 4 stops); or the client's block cap fired", len(r.Requests))
	}
	if pending := p.Pending(); len(pending) != 1 {
		r.Errorf("pending %v, want the doomed entry kept", pending)
	}
	r.CheckHooks()
}

// doomedProject is a stopgate project whose prompt "doomed"
// (src/prompts/doomed.md) arms a validator that never passes.
func doomedProject(t *testing.T) *Project {
	p := NewStopgateProject(t)
	p.WriteFile("src/prompts/doomed.md", "# Doomed\n")
	p.WriteFile("validators/never.sh", "#!/bin/sh\necho 'never good enough'\nexit 1\n")
	appendFile(p, "mappings.toml", `
[[mapping]]
prompt = "doomed"
validators = ["never"]

[validators.never]
run = "validators/never.sh"
fix = "There is no fix."
`)
	return p
}

func appendFile(p *Project, rel, text string) {
	p.t.Helper()
	p.WriteFile(rel, p.ReadFile(rel)+text)
}
