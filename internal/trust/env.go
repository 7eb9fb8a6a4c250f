package trust

import (
	"path"
	"slices"
)

// hookEnv are the variables, as path.Match patterns, that choose what the
// hooks and their validators run: the programs found (PATH), the code a
// shell, the loader or a language runtime loads first (BASH_ENV,
// LD_PRELOAD, NODE_OPTIONS, GOFLAGS), where stopgate looks (HOME,
// CLAUDE_PROJECT_DIR, STOPGATE_*), what git lists, and whom a judge's
// request reaches and believes (the proxies, the trusted certificates: a
// proxy the agent names would answer for the model). They are part of the
// trusted base: a settings file's env that sets one (the client hands it
// to every hook; a confined validator once wrote env.PATH into
// ~/.claude/settings.json and the gate ran the agent's sh) is judged as
// disableAllHooks is, by ConfigChange and gate check.
var hookEnv = []string{
	"PATH", "HOME", "SHELL", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "IFS", "CDPATH",
	"LD_*", "DYLD_*", "GO*", "CGO_*", "NODE_OPTIONS", "NODE_PATH", "npm_config_*", "NPM_CONFIG_*",
	"PYTHON*", "PERL5*", "PERLLIB", "RUBYOPT", "RUBYLIB", "GIT_*", "TMPDIR", "XDG_*",
	"CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "STOPGATE_*",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
}

// HookEnv returns those of names, a settings file's env keys, that choose
// what the hooks and validators run (hookEnv), each once.
func HookEnv(names []string) []string {
	var out []string
	for _, n := range names {
		if slices.Contains(out, n) {
			continue
		}
		if slices.ContainsFunc(hookEnv, func(p string) bool { ok, _ := path.Match(p, n); return ok }) {
			out = append(out, n)
		}
	}
	return out
}
