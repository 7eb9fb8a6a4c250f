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

func latest(s string) func(*Request) bool {
	return func(r *Request) bool { return strings.Contains(r.Latest(), s) }
}

func first(r *Request) bool { return r.Turns() == 0 }

// resultOf matches a request whose last message is the result of a call of tool.
func resultOf(tool string) func(*Request) bool {
	return func(r *Request) bool {
		n := len(r.Messages)
		if n < 2 || r.Messages[n-1].Role != "tool" {
			return false
		}
		for _, c := range r.Messages[n-2].Calls {
			if c.Name == tool {
				return true
			}
		}
		return false
	}
}

// Gemini CLI: an AfterTool read_file of a mapped prompt arms it; the AfterAgent stop is
// blocked with the fix text; the agent tries to rewrite mappings.toml and BeforeTool
// denies it; it writes the joke; the stop passes.
func TestGeminiBlockFixPass(t *testing.T) {
	p := NewProject(t, "gemini")
	srv := Start(t, Gemini, Script{
		When(latest(denied), Tool("write_file", map[string]any{"file_path": p.Path("output/joke.txt"), "content": joke + "\n"})),
		When(latest(blocked), Tool("write_file", map[string]any{"file_path": p.Path("mappings.toml"), "content": "# nothing to check\n"})),
		When(resultOf("write_file"), Text("Fixed: the joke is in output/joke.txt.")),
		When(resultOf("read_file"), Text("Done.")),
		When(first, Tool("read_file", map[string]any{"file_path": p.Path("src/prompts/joke.md")})),
	})
	r := gemini(t, p, srv, "Follow src/prompts/joke.md")
	if r.Err != nil {
		t.Fatalf("gemini: %v\nstdout: %s\nstderr: %s", r.Err, r.Stdout, tail(r.Stderr, 3000))
	}
	if testing.Verbose() {
		t.Logf("stdout: %s\nstderr: %s", r.Stdout, tail(r.Stderr, 4000))
	}
	var sawBlock, sawDeny bool
	for _, q := range r.Requests {
		sawBlock = sawBlock || strings.Contains(q.Latest(), "Fix: Write the joke to output/joke.txt.")
		sawDeny = sawDeny || strings.Contains(q.Latest(), "it would change mappings.toml")
	}
	if !sawBlock || !sawDeny {
		t.Errorf("the model was told: block with fix %v, guard deny %v", sawBlock, sawDeny)
	}
	if got := p.ReadFile("output/joke.txt"); got != joke+"\n" {
		t.Errorf("output/joke.txt = %q", got)
	}
	if strings.Contains(p.ReadFile("mappings.toml"), "nothing to check") {
		t.Error("mappings.toml was rewritten")
	}
	if q := p.Pending(); len(q) != 0 {
		t.Errorf("entries left: %v", q)
	}
	checkInputs(t, "gemini", r.Inputs)
}

// Gemini CLI has no block cap of its own: an agent that never fixes its work is ended
// by max_blocks, the halt (continue:false) after the third blocked stop.
func TestGeminiLoopEndsAtMaxBlocks(t *testing.T) {
	p := NewProject(t, "gemini")
	srv := Start(t, Gemini, Script{
		When(latest(blocked), Text("Done, really.")),
		When(resultOf("read_file"), Text("Done.")),
		When(first, Tool("read_file", map[string]any{"file_path": p.Path("src/prompts/joke.md")})),
	})
	r := gemini(t, p, srv, "Follow src/prompts/joke.md")
	stops := 0
	for _, in := range r.Inputs {
		if in.Program == "gate" {
			stops++
		}
	}
	if stops != 4 {
		t.Errorf("the gate ran at %d stops, want 4: three blocks, then the halt", stops)
	}
	if n := len(r.Requests); n != 5 {
		t.Errorf("%d model requests, want 5: the read, the first stop, three more after blocks", n)
	}
	if !strings.Contains(r.Stdout+r.Stderr, "stopgate halted the session") {
		t.Errorf("the halt reason is not shown\nstdout: %s\nstderr: %s", r.Stdout, tail(r.Stderr, 2000))
	}
	checkInputs(t, "gemini", r.Inputs)
}
