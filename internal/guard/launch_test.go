package guard

import (
	"strings"
)

// gateSpellings are the ways a shell runs stopgate's gate: every route's
// program (bin/, npm, go.mod's tool, go install, the plugin's launcher),
// each launcher with its options, and the wrappers around them. %s is
// where gate's arguments go.
var gateSpellings = []string{
	"gate %s", "bin/gate %s", "./bin/gate %s", "$HOME/go/bin/gate %s", "/usr/local/bin/gate %s",
	"node_modules/.bin/gate %s", "./node_modules/.bin/gate %s", "node_modules/@stopgate/linux-x64/bin/gate %s",
	"node_modules/@stopgate/*/bin/gate %s", "node node_modules/stopgate/bin/gate.js %s",
	"npx gate %s", "npx --yes gate %s", "npx -y gate %s", "npx --package=stopgate gate %s", "npx -p stopgate gate %s",
	"npm exec gate %s", "npm exec -- gate %s", "npm exec --yes -- gate %s", "npm x gate %s", "npm --prefix . exec gate %s",
	"pnpm exec gate %s", "pnpx gate %s", "yarn gate %s", "yarn exec gate %s", "bunx gate %s", "bun x gate %s",
	"npx -c 'gate %s'", "npm exec --call='gate %s'",
	"go tool gate %s", "go tool github.com/stopgate/stopgate/cmd/gate %s",
	"go run github.com/stopgate/stopgate/cmd/gate %s", "go run github.com/stopgate/stopgate/cmd/gate@latest %s",
	"go run -mod=mod ./cmd/gate %s",
	`"$CLAUDE_PLUGIN_ROOT"/bin/gate %s`, "~/.claude/plugins/cache/stopgate/stopgate/0.4.0/bin/gate %s",
	"sudo npx gate %s", "env CI=1 npx --yes gate %s", "sh -c 'npx gate %s'", "cd src && npx gate %s",
}

// gateCases are gateSpellings with each verb: the ones that change what
// stopgate relies on are refused (clear the state dir; init and uninstall
// the hook registration), the ones that read are allowed.
func gateCases() []bashCase {
	verbs := []bashCase{
		{"clear s1", "tmp/validation"}, {"init", ".claude/settings.json"}, {"init --no-wall", ".claude/settings.json"},
		{"uninstall", ".claude/settings.json"}, {"uninstall --client codex", ".claude/settings.json"},
		{"status", ""}, {"check", ""}, {"explain src/prompts/joke.md", ""}, {"verdict s1", ""},
	}
	var out []bashCase
	for _, s := range gateSpellings {
		for _, v := range verbs {
			out = append(out, bashCase{strings.ReplaceAll(s, "%s", v.cmd), v.want})
		}
	}
	// A word named gate that is no call of it, and launchers of others.
	return append(out, []bashCase{
		{"go build -o bin/gate ./cmd/gate", ""}, {"go install ./cmd/...", ""}, {"npm install -D stopgate", ""},
		{"npx prettier --check .", ""}, {"grep -rn 'gate uninstall' docs", ""}, {"echo npx gate uninstall", ""},
		{"npm uninstall stopgate", ""}, {"gatekeeper init", ""}, {"npx -c 'echo gate init'", ""},
	}...)
}
