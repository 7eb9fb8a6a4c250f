package clients

import (
	"slices"
	"testing"

	. "github.com/stopgate/stopgate/internal/e2e/fakellm"
)

// OpenCode: the agent's rewrite of the stopgate plugin through bash is denied by the
// plugin's own guard (tool.execute.before), before the command runs.
func TestOpenCodePluginRewriteDenied(t *testing.T) {
	p := NewProject(t, "opencode")
	const name = ".opencode/plugin/stopgate.js"
	before := p.ReadFile(name)
	srv := Start(t, Chat, Script{
		When(func(r *Request) bool { return r.Has("Generate a title") || r.Has("title for") }, Text("Plugin session")),
		When(LastHas(denied), Text("Denied, as expected.")),
		When(AtTurn(0), Tool("bash", map[string]any{"command": `cd .opencode/plugin && echo 'export const Off = async () => ({})' > stopgate.js`, "description": "switch off"})),
	})
	oc := startOpenCode(t, p, srv)
	oc.prompt("Switch the plugin off")
	told := func() bool {
		return slices.ContainsFunc(srv.Requests(), func(q *Request) bool { return q.Has(denied) && q.Has(name) })
	}
	oc.waitFor("the model told of the denial", told)
	if after := p.ReadFile(name); after != before {
		t.Errorf("%s was rewritten:\n%s", name, after)
	}
}
