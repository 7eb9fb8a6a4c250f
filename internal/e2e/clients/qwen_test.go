package clients

import (
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// qwen runs Qwen Code headless on prompt against srv (Chat Completions), in p.
func qwen(t *testing.T, p *Project, srv *Server, prompt string) *Result {
	t.Helper()
	bin := clientBin(t, "qwen/node_modules/@qwen-code/qwen-code/cli.js")
	// Headless runs need the auth type chosen in the user's settings.
	p.WriteUserFile(".qwen/settings.json", `{"security":{"auth":{"selectedType":"openai"}},"model":{"name":"fake-model"},"general":{"disableAutoUpdate":true},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false}}`)
	return p.Run(srv, "node", []string{bin, "-p", prompt, "--approval-mode", "yolo"},
		[]string{"OPENAI_BASE_URL=" + srv.URL() + "/v1", "OPENAI_API_KEY=dummy", "OPENAI_MODEL=fake-model"})
}

// Qwen Code: a read_file of a mapped prompt arms it (PostToolUse); the Stop is
// blocked with the fix text; the agent tries to rewrite mappings.toml and PreToolUse
// denies it; it writes the joke; the stop passes.
func TestQwenBlockFixPass(t *testing.T) {
	p := NewProject(t, "qwen")
	srv := Start(t, Chat, Script{
		When(LastHas(denied), Tool("write_file", map[string]any{"file_path": p.Path("output/joke.txt"), "content": joke + "\n"})),
		When(LastHas(blocked), Tool("write_file", map[string]any{"file_path": p.Path("mappings.toml"), "content": "# nothing to check\n"})),
		When(ResultOf("write_file"), Text("Fixed: the joke is in output/joke.txt.")),
		When(ResultOf("read_file"), Text("Done.")),
		When(AtTurn(0), Tool("read_file", map[string]any{"file_path": p.Path("src/prompts/joke.md")})),
	})
	r := qwen(t, p, srv, "Follow src/prompts/joke.md")
	if r.Err != nil {
		t.Fatalf("qwen: %v\nstdout: %s\nstderr: %s", r.Err, r.Stdout, tail(r.Stderr, 3000))
	}
	if testing.Verbose() {
		t.Logf("stdout: %s\nstderr: %s", r.Stdout, tail(r.Stderr, 4000))
	}
	checkBlockFixPass(t, p, "qwen", r.Requests, r.Inputs)
}

// Qwen Code lets the agent stop after 8 consecutive blocks and takes a halt as a
// block; max_blocks (3) halts the loop first, at the fourth failing stop, relayed
// through the model: its reply is what qwen -p prints.
func TestQwenLoopEndsAtMaxBlocks(t *testing.T) {
	p := NewProject(t, "qwen")
	srv := Start(t, Chat, Script{
		When(LastHas(relayed), Text(userSees)),
		When(LastHas(blocked), Text("Done, really.")),
		When(ResultOf("read_file"), Text("Done.")),
		When(AtTurn(0), Tool("read_file", map[string]any{"file_path": p.Path("src/prompts/joke.md")})),
	})
	r := qwen(t, p, srv, "Follow src/prompts/joke.md")
	checkHaltRelayed(t, r, srv)
}
