package clients

import (
	"regexp"
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// codex runs `codex exec` on prompt against srv (the Responses API), in p.
func codex(t *testing.T, p *Project, srv *Server, prompt string) *Result {
	t.Helper()
	bin := clientBin(t, "codex/node_modules/@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex")
	p.WriteUserFile(".codex/config.toml", `model = "fake-model"
model_provider = "fake"

[model_providers.fake]
name = "fake"
base_url = "`+srv.URL()+`/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"

# Codex reads a project's .codex/ only in a trusted project: the trust gate a user
# passes when Codex asks.
[projects."`+p.Dir+`"]
trust_level = "trusted"
`)
	// Without trust (or the bypass, for a throwaway project) Codex skips hooks silently.
	return p.Run(srv, bin, []string{"exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check",
		"--dangerously-bypass-approvals-and-sandbox", prompt},
		[]string{"CODEX_HOME=" + p.Home + "/.codex", "FAKE_API_KEY=dummy"})
}

// shell is the model running a command with the tool Codex offers for it.
func shell(r *Request, command string) Part {
	for _, name := range r.Tools {
		switch name {
		case "exec_command":
			return Tool(name, map[string]any{"cmd": command})
		case "shell_command":
			return Tool(name, map[string]any{"command": command})
		}
	}
	return Tool("shell", map[string]any{"command": []any{"bash", "-lc", command}})
}

// run answers with a shell command, in the tool Codex offers for it.
func run(command string) Turn {
	return func(r *Request) []Part { return []Part{shell(r, command)} }
}

// after answers turn to the requests m accepts.
func after(m Match, turn Turn) Turn {
	return func(r *Request) []Part {
		if m(r) {
			return turn(r)
		}
		return nil
	}
}

// Codex has no read tool: the model reads the prompt with a shell command, which
// arms it; Stop is blocked with the fix text; a shell write to mappings.toml is
// denied; the model writes the joke; the stop passes.
func TestCodexBlockFixPass(t *testing.T) {
	p := NewProject(t, "codex")
	r := codexBlockFixPass(t, p)
	if testing.Verbose() {
		t.Logf("err %v\nstdout: %s\nstderr: %s", r.Err, r.Stdout, tail(r.Stderr, 4000))
		for _, q := range r.Requests {
			t.Logf("request: %d messages, latest %q", len(q.Messages), tail(q.Latest(), 300))
		}
	}
	checkBlockFixPass(t, p, "codex", r.Requests, r.Inputs)
}

// codexBlockFixPass runs the session of TestCodexBlockFixPass in p.
func codexBlockFixPass(t *testing.T, p *Project) *Result {
	srv := Start(t, Responses, Script{
		after(LastHas(denied), run("mkdir -p output && printf '%s\\n' '"+joke+"' > output/joke.txt")),
		after(LastHas(blocked), run("printf '# nothing to check\\n' > mappings.toml")),
		When(LastHas("Process exited with code 0"), Text("Fixed: the joke is in output/joke.txt.")),
		When(LastHas("Write a short, original programming joke"), Text("Done.")),
		after(AtTurn(0), run("sed -n '1,80p' src/prompts/joke.md")),
	})
	return codex(t, p, srv, "Follow src/prompts/joke.md")
}

// Codex has no block cap at all (hundreds of blocks in a row go through): max_blocks
// alone ends a failing loop, with the halt at the fourth failing stop.
func TestCodexLoopEndsAtMaxBlocks(t *testing.T) {
	p := NewProject(t, "codex")
	srv := Start(t, Responses, Script{
		When(LastHas(blocked), Text("Done, really.")),
		When(LastHas("Write a short, original programming joke"), Text("Done.")),
		after(AtTurn(0), run("cat src/prompts/joke.md")),
	})
	r := codex(t, p, srv, "Follow src/prompts/joke.md")
	checkHaltedLoop(t, "codex", r)
}

// agentIDIn finds the id spawn_agent returned to the main thread.
var agentIDIn = regexp.MustCompile(`"(?:agent_id|id)"\s*:\s*"([^"]+)"`)

// child matches the requests of the subagent's thread.
func child(r *Request) bool {
	for _, m := range r.Messages {
		if m.Role == "user" && strings.Contains(m.Text, "SUBTASK") {
			return true
		}
	}
	return false
}

// A Codex subagent's shell read arms its own scope: its SubagentStop is blocked until
// it writes the joke, and the main thread's Stop is not held by it.
func TestCodexSubagentScope(t *testing.T) {
	p := NewProject(t, "codex")
	srv := Start(t, Responses, Script{
		after(func(r *Request) bool { return child(r) && strings.Contains(r.Latest(), blocked) },
			run("mkdir -p output && printf '%s\\n' '"+joke+"' > output/joke.txt")),
		When(func(r *Request) bool {
			return child(r) && strings.Contains(r.Latest(), "Process exited with code 0") && r.Turns() > 2
		}, Text("Subtask fixed.")),
		When(func(r *Request) bool {
			return child(r) && strings.Contains(r.Latest(), "Write a short, original programming joke")
		}, Text("Subtask done.")),
		after(func(r *Request) bool { return child(r) && !strings.Contains(r.Latest(), "Process exited") }, run("cat src/prompts/joke.md")),
		func(r *Request) []Part {
			if !ResultOf("spawn_agent")(r) {
				return nil
			}
			m := agentIDIn.FindStringSubmatch(r.Latest())
			if m == nil {
				t.Errorf("no agent id in %q", r.Latest())
				return []Part{Text("no agent")}
			}
			return []Part{{Call: &Call{Namespace: "multi_agent_v1", Name: "wait_agent", Args: map[string]any{"targets": []any{m[1]}, "timeout_ms": 60000}}}}
		},
		When(LastHas(`"timed_out":false`), Text("All done.")), // wait_agent's result

		When(AtTurn(0), Part{Call: &Call{Namespace: "multi_agent_v1", Name: "spawn_agent", Args: map[string]any{"message": "SUBTASK: follow src/prompts/joke.md"}}}),
	})
	r := codex(t, p, srv, "Delegate the joke to a subagent")
	var subBlocked, mainBlocked bool
	for _, q := range r.Requests {
		if strings.Contains(q.Latest(), blocked) {
			if child(q) {
				subBlocked = true
			} else {
				mainBlocked = true
			}
		}
	}
	if !subBlocked || mainBlocked {
		t.Errorf("blocked: subagent %v (want true), main thread %v (want false)", subBlocked, mainBlocked)
	}
	if got := p.ReadFile("output/joke.txt"); got != joke+"\n" {
		t.Errorf("output/joke.txt = %q", got)
	}
	if q := p.Pending(); len(q) != 0 {
		t.Errorf("entries left: %v", q)
	}
	checkInputs(t, "codex", r.Inputs)
}
