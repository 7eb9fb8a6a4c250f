package clients

import (
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// Gemini CLI expands a custom command (.gemini/commands/joke.toml) before BeforeAgent:
// the hook sees the command's text, never "/joke", so a custom command arms nothing by
// its name (a documented limit). The day a Gemini release passes the name, this fails
// and the dialect can arm it like a Claude Code slash command.
func TestGeminiCustomCommandIsExpanded(t *testing.T) {
	p := NewProject(t, "gemini")
	const text = "Write a short programming joke to output/joke.txt.\n"
	p.WriteFile(".gemini/commands/joke.toml", "description = \"Tell a joke\"\nprompt = \"\"\"\n"+text+"\"\"\"\n")
	srv := Start(t, Gemini, Script{When(AtTurn(0), Text("Done."))})
	r := gemini(t, p, srv, "/joke")
	var prompts []string
	for _, in := range r.Inputs {
		if in.Program == "detect" && in.field("hook_event_name") == "BeforeAgent" {
			prompts = append(prompts, in.field("prompt"))
		}
	}
	if len(prompts) != 1 || prompts[0] != text {
		t.Errorf("BeforeAgent prompts %q, want the expansion %q", prompts, text)
	}
	if q := p.Pending(); len(q) != 0 {
		t.Errorf("armed: %v", q)
	}
	checkInputs(t, "gemini", r.Inputs)
}
