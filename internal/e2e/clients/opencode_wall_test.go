package clients

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// OpenCode's permission rules are the second wall, and stand without the guard: with
// the stopgate plugin gone, the deny rules gate init wrote into opencode.json make
// OpenCode itself refuse the write tool on mappings.toml, given its absolute path,
// while a file of the same name in a subfolder is written: the rules match the
// protected file, not its name. The project is outside git, so OpenCode matches the
// path from "/" (a probe in a git repository matched the path from its top; init
// writes both).
func TestOpenCodeWall(t *testing.T) {
	p := NewProject(t, "opencode")
	var cfg struct {
		Permission json.RawMessage `json:"permission"`
	}
	if err := json.Unmarshal([]byte(p.ReadFile("opencode.json")), &cfg); err != nil || !strings.Contains(string(cfg.Permission), `mappings.toml": "deny"`) {
		t.Fatalf("opencode.json has no wall (%v):\n%s", err, p.ReadFile("opencode.json"))
	}
	if err := os.Remove(p.Path(".opencode/plugin/stopgate.js")); err != nil {
		t.Fatal(err)
	}
	p.WriteFile("sub/mappings.toml", "# another file of the same name\n")
	before := p.ReadFile("mappings.toml")
	const refused = "prevents you from using this specific tool call"
	srv := Start(t, Chat, Script{
		When(func(r *Request) bool { return r.Has("Generate a title") || r.Has("title for") }, Text("Wall session")),
		When(LastHas(refused), Tool("write", map[string]any{"filePath": p.Path("sub/mappings.toml"), "content": "# mine\n"})),
		When(ResultOf("write"), Text("Done.")),
		When(AtTurn(0), Tool("write", map[string]any{"filePath": p.Path("mappings.toml"), "content": "# nothing to check\n"})),
	})
	oc := startOpenCodeWith(t, p, srv, ",\n  \"permission\": "+string(cfg.Permission))
	oc.prompt("Empty mappings.toml, then sub/mappings.toml")
	oc.waitFor("the write to sub/mappings.toml", func() bool { return p.ReadFile("sub/mappings.toml") == "# mine\n" })
	if got := p.ReadFile("mappings.toml"); got != before {
		t.Errorf("mappings.toml changed:\n%s", got)
	}
	if !slices.ContainsFunc(srv.Requests(), func(r *Request) bool { return strings.Contains(r.Latest(), refused) }) {
		t.Error("no model request carries OpenCode's refusal of the write")
	}
}
