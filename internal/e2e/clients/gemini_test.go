package clients

import (
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

const (
	blocked = "stopgate: you may not stop yet"
	denied  = "stopgate denied"
	joke    = "There are 10 kinds of people: those who read binary and those who do not."
)

// gemini runs Gemini CLI headless on prompt against srv, in p.
func gemini(t *testing.T, p *Project, srv *Server, prompt string) *Result {
	t.Helper()
	bin := clientBin(t, "gemini/node_modules/@google/gemini-cli/bundle/gemini.js")
	// Headless runs fail with "Invalid auth method selected" without the auth type
	// chosen in the user's settings; the loop detector would call the model for JSON.
	p.WriteUserFile(".gemini/settings.json", `{"security":{"auth":{"selectedType":"gemini-api-key"}},"model":{"disableLoopDetection":true},"general":{"disableAutoUpdate":true},"privacy":{"usageStatisticsEnabled":false},"telemetry":{"enabled":false}}`)
	return p.Run(srv, "node", []string{bin, "-p", prompt, "-m", "gemini-2.5-flash", "--approval-mode", "yolo"},
		// Project hooks run only in a trusted folder; --skip-trust runs untrusted.
		[]string{"GOOGLE_GEMINI_BASE_URL=" + srv.URL(), "GEMINI_API_KEY=dummy", "GEMINI_CLI_TRUST_WORKSPACE=true"})
}

// Gemini CLI: an AfterTool read_file of a mapped prompt arms it; the AfterAgent stop is
// blocked with the fix text; the agent tries to rewrite mappings.toml and BeforeTool
// denies it; it writes the joke; the stop passes.
func TestGeminiBlockFixPass(t *testing.T) {
	p := NewProject(t, "gemini")
	srv := Start(t, Gemini, Script{
		When(LastHas(denied), Tool("write_file", map[string]any{"file_path": p.Path("output/joke.txt"), "content": joke + "\n"})),
		When(LastHas(blocked), Tool("write_file", map[string]any{"file_path": p.Path("mappings.toml"), "content": "# nothing to check\n"})),
		When(ResultOf("write_file"), Text("Fixed: the joke is in output/joke.txt.")),
		When(ResultOf("read_file"), Text("Done.")),
		When(AtTurn(0), Tool("read_file", map[string]any{"file_path": p.Path("src/prompts/joke.md")})),
	})
	r := gemini(t, p, srv, "Follow src/prompts/joke.md")
	if r.Err != nil {
		t.Fatalf("gemini: %v\nstdout: %s\nstderr: %s", r.Err, r.Stdout, tail(r.Stderr, 3000))
	}
	if testing.Verbose() {
		t.Logf("stdout: %s\nstderr: %s", r.Stdout, tail(r.Stderr, 4000))
	}
	checkBlockFixPass(t, p, "gemini", r.Requests, r.Inputs)
}

// Gemini CLI has no block cap of its own: an agent that never fixes its work is ended
// by max_blocks, the halt (continue:false) after the third blocked stop.
func TestGeminiLoopEndsAtMaxBlocks(t *testing.T) {
	p := NewProject(t, "gemini")
	srv := Start(t, Gemini, Script{
		When(LastHas(blocked), Text("Done, really.")),
		When(ResultOf("read_file"), Text("Done.")),
		When(AtTurn(0), Tool("read_file", map[string]any{"file_path": p.Path("src/prompts/joke.md")})),
	})
	r := gemini(t, p, srv, "Follow src/prompts/joke.md")
	if !strings.Contains(r.Stdout+r.Stderr, "stopgate halted the session") {
		t.Errorf("the halt reason is not shown\nstdout: %s\nstderr: %s", r.Stdout, tail(r.Stderr, 2000))
	}
	checkHaltedLoop(t, "gemini", r)
}
