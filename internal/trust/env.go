package trust

import (
	"path"
	"slices"
)

// hookEnv are the variables (path.Match patterns) that choose what the
// hooks and validators run: the programs found, the code a shell, loader
// or runtime loads first, where stopgate looks, what git lists, and whom a
// judge's request reaches and believes (a proxy the agent names would
// answer for the model). A settings file's env that sets one is judged as
// disableAllHooks is (a validator once wrote env.PATH into the user's
// settings, and the gate ran the agent's sh).
var hookEnv = []string{
	"PATH", "HOME", "SHELL", "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "IFS", "CDPATH",
	"LD_*", "DYLD_*", "GO*", "CGO_*", "NODE_OPTIONS", "NODE_PATH", "npm_config_*", "NPM_CONFIG_*",
	"PYTHON*", "PERL5*", "PERLLIB", "RUBYOPT", "RUBYLIB", "GIT_*", "TMPDIR", "XDG_*",
	"CLAUDE_PROJECT_DIR", "CLAUDE_PLUGIN_ROOT", "STOPGATE_*",
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy", "SSL_CERT_FILE", "SSL_CERT_DIR",
}

// HookEnv returns those of names (env keys) in hookEnv, each once.
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
