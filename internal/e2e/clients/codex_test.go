package clients

import (
	"regexp"
	"slices"
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
// alone ends a failing loop. Codex shows a halt as "hook: Stop Stopped" alone, so the
// fourth failing stop hands the model the halt's reason to tell the user (codex exec
// prints its reply), and the fifth halts.
func TestCodexLoopEndsAtMaxBlocks(t *testing.T) {
	p := NewProject(t, "codex")
	srv := Start(t, Responses, Script{
		When(LastHas(relayed), Text(userSees)),
		When(LastHas(blocked), Text("Done, really.")),
		When(LastHas("Write a short, original programming joke"), Text("Done.")),
		after(AtTurn(0), run("cat src/prompts/joke.md")),
	})
	r := codex(t, p, srv, "Follow src/prompts/joke.md")
	checkHaltRelayed(t, r, srv)
	if n := gateRuns(r); n != 5 {
		t.Errorf("the gate ran at %d stops, want 5: three blocks, the relay, the halt", n)
	}
	if !strings.Contains(r.Stderr, "hook: Stop Stopped") {
		t.Errorf("codex did not halt\nstderr: %s", tail(r.Stderr, 2000))
	}
}

// Codex has no read tool: `cd dir && cat` is a read of the prompt, resolved by the
// guard's dry run of the command; the stop is blocked until the work is done.
func TestCodexCdCatArms(t *testing.T) {
	p := NewProject(t, "codex")
	srv := Start(t, Responses, Script{
		When(LastHas(relayed), Text(userSees)),
		When(LastHas(blocked), Text("Blocked, as expected.")),
		When(LastHas("Write a short, original programming joke"), Text("Done.")),
		after(AtTurn(0), run("cd src/prompts && cat joke.md")),
	})
	r := codex(t, p, srv, "Follow src/prompts/joke.md")
	if n := gateRuns(r); n < 2 {
		t.Errorf("the gate ran at %d stops, want a block at the first", n)
	}
	if !slices.ContainsFunc(srv.Requests(), func(q *Request) bool { return q.Has(blocked) }) {
		t.Errorf("the stop was not blocked: the read did not arm\nstderr: %s", tail(r.Stderr, 2000))
	}
}

// gateRuns counts the stops the gate judged.
func gateRuns(r *Result) int {
	n := 0
	for _, in := range r.Inputs {
		if in.Program == "gate" {
			n++
		}
	}
	return n
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

// The agent's rewrite of Codex's own hook file, which would switch stopgate off for
// the next session, is denied by the guard before the command runs.
func TestCodexHookFileRewriteDenied(t *testing.T) {
	p := NewProject(t, "codex")
	before := p.ReadFile(".codex/hooks.json")
	srv := Start(t, Responses, Script{
		When(LastHas(denied), Text("Denied, as expected.")),
		after(AtTurn(0), run(`cd .codex && echo '{"hooks":{}}' > hooks.json`)),
	})
	r := codex(t, p, srv, "Switch the hooks off")
	if after := p.ReadFile(".codex/hooks.json"); after != before {
		t.Errorf(".codex/hooks.json was rewritten:\n%s", after)
	}
	if !slices.ContainsFunc(srv.Requests(), func(q *Request) bool { return q.Has(denied) && q.Has(".codex/hooks.json") }) {
		t.Errorf("the model was not told of a denial\nstderr: %s", tail(r.Stderr, 2000))
	}
}
