package clients

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stopgate/stopgate/internal/e2e"
	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// copilot runs Copilot CLI headless on prompt against srv (Chat Completions), in p.
func copilot(t *testing.T, p *Project, srv *Server, prompt string) *Result {
	t.Helper()
	bin := clientBin(t, "copilot/node_modules/@github/copilot-linux-x64/copilot")
	// The binary unpacks itself under the cache folder on first run: the one
	// scripts/install-clients filled, not a fresh one per test.
	cache := filepath.Join(e2e.Root(t), "tmp", "e2e", "copilot", "cache")
	return p.Run(srv, bin, []string{"-p", prompt, "--allow-all-tools", "--no-auto-update", "--disable-client-telemetry",
		"--disable-builtin-mcps", "--trust-folder"},
		[]string{"COPILOT_PROVIDER_BASE_URL=" + srv.URL() + "/v1", "COPILOT_PROVIDER_API_KEY=dummy", "COPILOT_MODEL=fake-model",
			"XDG_CACHE_HOME=" + cache})
}

// Copilot CLI: a view of a mapped prompt arms it; agentStop is blocked with the fix
// text (JSON only: Copilot ignores exit 2); the agent tries to create mappings.toml
// and preToolUse denies it; it writes the joke; the stop passes.
func TestCopilotBlockFixPass(t *testing.T) {
	p := NewProject(t, "copilot")
	p.WriteFile("output/.keep", "") // Copilot's create makes no parent directory
	srv := Start(t, Chat, Script{
		When(LastHas(denied), Tool("create", map[string]any{"path": p.Path("output/joke.txt"), "file_text": joke + "\n"})),
		When(LastHas(blocked), Tool("create", map[string]any{"path": p.Path("mappings.toml"), "file_text": "# nothing to check\n"})),
		When(ResultOf("create"), Text("Fixed: the joke is in output/joke.txt.")),
		When(ResultOf("view"), Text("Done.")),
		When(AtTurn(0), Tool("view", map[string]any{"path": p.Path("src/prompts/joke.md")})),
	})
	r := copilot(t, p, srv, "Follow src/prompts/joke.md")
	checkBlockFixPass(t, p, "copilot", r.Requests, r.Inputs)
}

// Copilot CLI lets the agent stop after 8 consecutive blocks; max_blocks (3) halts the
// loop first, at the fourth failing stop. Copilot drops a halt (continue:false), so the
// halt is a block handing the model its reason to tell the user: the model's reply is
// what copilot -p prints, and the stop is never passed silently.
func TestCopilotLoopEndsAtMaxBlocks(t *testing.T) {
	p := NewProject(t, "copilot")
	srv := Start(t, Chat, Script{
		When(LastHas(relayed), Text(userSees)),
		When(LastHas(blocked), Text("Done, really.")),
		When(ResultOf("view"), Text("Done.")),
		When(AtTurn(0), Tool("view", map[string]any{"path": p.Path("src/prompts/joke.md")})),
	})
	r := copilot(t, p, srv, "Follow src/prompts/joke.md")
	checkHaltRelayed(t, r, srv)
}

// subtask matches the requests of the subagent the task tool started.
func subtask(r *Request) bool {
	for _, m := range r.Messages {
		if m.Role == "user" {
			return strings.Contains(m.Text, "SUBTASK")
		}
	}
	return false
}

// A Copilot subagent's read arms its own scope: its subagentStop is blocked until it
// fixes the work, and the main agent's agentStop is not held by it.
func TestCopilotSubagentScope(t *testing.T) {
	p := NewProject(t, "copilot")
	p.WriteFile("output/.keep", "")
	srv := Start(t, Chat, Script{
		When(All(subtask, LastHas(blocked)), Tool("create", map[string]any{"path": p.Path("output/joke.txt"), "file_text": joke + "\n"})),
		When(All(subtask, ResultOf("create")), Text("Subtask fixed.")),
		When(All(subtask, ResultOf("view")), Text("Subtask done.")),
		When(subtask, Tool("view", map[string]any{"path": p.Path("src/prompts/joke.md")})),
		When(ResultOf("task"), Text("All done.")),
		When(AtTurn(0), Tool("task", map[string]any{"agent_type": "general-purpose", "name": "joker", "description": "write a joke",
			"prompt": "SUBTASK: follow src/prompts/joke.md"})),
	})
	r := copilot(t, p, srv, "Delegate the joke to a subagent")
	var subBlocked, mainBlocked bool
	for _, q := range r.Requests {
		if strings.Contains(q.Latest(), blocked) {
			if subtask(q) {
				subBlocked = true
			} else {
				mainBlocked = true
			}
		}
	}
	if !subBlocked || mainBlocked {
		t.Errorf("blocked: subagent %v (want true), main agent %v (want false)", subBlocked, mainBlocked)
	}
	if got := p.ReadFile("output/joke.txt"); got != joke+"\n" {
		t.Errorf("output/joke.txt = %q", got)
	}
	if q := p.Pending(); len(q) != 0 {
		t.Errorf("entries left: %v", q)
	}
	checkInputs(t, "copilot", r.Inputs)
}
