package clients

import (
	"os/exec"
	"slices"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// The attacks below are the agent's own, run through the client's shell tool: a read
// the agent takes out of the queue with a Python one-liner run from inside the state
// dir (which the guard cannot see into) is judged at the stop from the client's
// record; a rewrite of the client's hook file is denied before it runs.

// rmQueue is the agent's command that deletes the queue. (python3 by name: Copilot
// asks for approval of a program named by a path outside the project.)
func rmQueue(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	return `cd tmp/validation && python3 -c 'import shutil; shutil.rmtree("sessions")'`
}

// byAgent is a Turn at which the agent itself deletes the queue with cmd, a call of
// its own shell tool; it counts the entries there were to delete.
func (l *loseQueue) byAgent(m Match, cmd Turn) Turn {
	return func(r *Request) []Part {
		if !m(r) {
			return nil
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.deleted += len(l.p.Pending())
		return cmd(r)
	}
}

// checkHookFileKept checks that the agent's rewrite of the client's hook file name was
// denied: the file is as it was, and the model was told.
func checkHookFileKept(t *testing.T, p *Project, srv *Server, r *Result, name, before string) {
	t.Helper()
	if after := p.ReadFile(name); after != before {
		t.Errorf("%s was rewritten:\n%s", name, after)
	}
	if !slices.ContainsFunc(srv.Requests(), func(q *Request) bool { return q.Has(denied) && q.Has(name) }) {
		t.Errorf("the model was not told of a denial\nstdout: %s\nstderr: %s", r.Stdout, tail(r.Stderr, 2000))
	}
}

// Gemini CLI: read_file arms the prompt; the agent's run_shell_command deletes the
// queue; AfterAgent is blocked anyway from the session file.
func TestGeminiAgentLosesQueue(t *testing.T) {
	p := NewProject(t, "gemini")
	lost := &loseQueue{p: p}
	srv := Start(t, Gemini, Script{
		When(LastHas(blocked), Tool("write_file", map[string]any{"file_path": p.Path("output/joke.txt"), "content": joke + "\n"})),
		When(ResultOf("write_file"), Text("Fixed: the joke is in output/joke.txt.")),
		When(ResultOf("run_shell_command"), Text("Done.")),
		lost.byAgent(ResultOf("read_file"), When(Always, Tool("run_shell_command", map[string]any{"command": rmQueue(t)}))),
		When(AtTurn(0), Tool("read_file", map[string]any{"file_path": p.Path("src/prompts/joke.md")})),
	})
	r := gemini(t, p, srv, "Follow src/prompts/joke.md")
	checkLostRead(t, p, "gemini", lost, r)
}

// Codex: a shell cat arms the prompt; the agent's next shell command deletes the
// queue; Stop is blocked anyway from the rollout.
func TestCodexAgentLosesQueue(t *testing.T) {
	p := NewProject(t, "codex")
	lost := &loseQueue{p: p}
	srv := Start(t, Responses, Script{
		after(LastHas(blocked), run("mkdir -p output && printf '%s\\n' '"+joke+"' > output/joke.txt && echo joke-written")),
		When(LastHas("joke-written"), Text("Fixed: the joke is in output/joke.txt.")),
		When(LastHas("queue-gone"), Text("Done.")),
		lost.byAgent(LastHas("Write a short, original programming joke"), run(rmQueue(t)+" && echo queue-gone")),
		after(AtTurn(0), run("cat src/prompts/joke.md")),
	})
	r := codex(t, p, srv, "Follow src/prompts/joke.md")
	checkLostRead(t, p, "codex", lost, r)
}

// Gemini CLI: the agent's rewrite of .gemini/settings.json through its shell is denied.
func TestGeminiHookFileRewriteDenied(t *testing.T) {
	p := NewProject(t, "gemini")
	const name = ".gemini/settings.json"
	before := p.ReadFile(name)
	srv := Start(t, Gemini, Script{
		When(LastHas(denied), Text("Denied, as expected.")),
		When(AtTurn(0), Tool("run_shell_command", map[string]any{"command": `cd .gemini && echo '{"hooks":{}}' > settings.json`})),
	})
	r := gemini(t, p, srv, "Switch the hooks off")
	checkHookFileKept(t, p, srv, r, name, before)
}

// Copilot CLI: a view arms the prompt; the agent's bash deletes the queue; agentStop
// is blocked anyway from events.jsonl.
func TestCopilotAgentLosesQueue(t *testing.T) {
	p := NewProject(t, "copilot")
	p.WriteFile("output/.keep", "") // Copilot's create makes no parent directory
	lost := &loseQueue{p: p}
	srv := Start(t, Chat, Script{
		When(LastHas(blocked), Tool("create", map[string]any{"path": p.Path("output/joke.txt"), "file_text": joke + "\n"})),
		When(ResultOf("create"), Text("Fixed: the joke is in output/joke.txt.")),
		When(ResultOf("bash"), Text("Done.")),
		lost.byAgent(ResultOf("view"), When(Always, Tool("bash", map[string]any{"command": rmQueue(t), "description": "clean up"}))),
		When(AtTurn(0), Tool("view", map[string]any{"path": p.Path("src/prompts/joke.md")})),
	})
	r := copilot(t, p, srv, "Follow src/prompts/joke.md")
	checkLostRead(t, p, "copilot", lost, r)
}

// Copilot CLI: the agent's rewrite of its stopgate hook file through bash is denied.
func TestCopilotHookFileRewriteDenied(t *testing.T) {
	p := NewProject(t, "copilot")
	const name = ".github/hooks/stopgate.json"
	before := p.ReadFile(name)
	srv := Start(t, Chat, Script{
		When(LastHas(denied), Text("Denied, as expected.")),
		When(AtTurn(0), Tool("bash", map[string]any{"command": `cd .github/hooks && echo '{}' > stopgate.json`, "description": "switch off"})),
	})
	r := copilot(t, p, srv, "Switch the hooks off")
	checkHookFileKept(t, p, srv, r, name, before)
}
