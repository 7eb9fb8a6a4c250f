package trust

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/client"
	paths "github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/regular"
)

// dotEnvDirs are the clients that load .env files, and their folder.
var dotEnvDirs = map[string]string{
	client.Gemini.Name: path.Dir(client.Gemini.HookFile), client.Qwen.Name: path.Dir(client.Qwen.HookFile),
}

// DotEnv are the existing .env files the client named loads, and so hands every hook.
func DotEnv(name, root, home string) []string {
	return slices.DeleteFunc(dotEnvPaths(name, root, home), func(c string) bool {
		st, err := os.Stat(c)
		return err != nil || st.IsDir()
	})
}

// dotEnvPaths are where the client named looks for a .env, from the root
// up to HOME (or /), then HOME's (Gemini CLI's findEnvFile, Qwen Code's
// findEnvFiles): every one, since which comes first is the agent's to change.
func dotEnvPaths(name, root, home string) []string {
	dir, ok := dotEnvDirs[name]
	if !ok {
		return nil
	}
	var out []string
	for d := filepath.Clean(root); d != home; d = filepath.Dir(d) {
		out = append(out, filepath.Join(d, dir, ".env"), filepath.Join(d, ".env"))
		if filepath.Dir(d) == d {
			break
		}
	}
	if home != "" {
		out = append(out, filepath.Join(home, dir, ".env"), filepath.Join(home, ".env"))
	}
	return out
}

// DotEnvWrite judges a write that leaves text in p, absolute: the
// variables of HookEnv text sets when p is a .env the client named loads
// (an LD_PRELOAD, not a DATABASE_URL), text read only then; else nil.
func DotEnvWrite(name, root, home, p string, text func() string) *DotEnvSetting {
	p = filepath.Clean(p)
	if !slices.Contains(dotEnvPaths(name, root, home), p) {
		return nil
	}
	if env := HookEnv(DotEnvNames([]byte(text()))); len(env) > 0 {
		return &DotEnvSetting{Path: p, Show: showPath(root, home, p), Env: env}
	}
	return nil
}

// DotEnvHookEnv returns the .env files the client named loads that set a
// variable of HookEnv, or that cannot be judged: a named pipe (it would
// hold the gate, and feed the client what it likes) or a file over 1 MiB.
// One the gate may not open is left out: the client cannot read it either.
func DotEnvHookEnv(name, root, home string) []DotEnvSetting {
	var out []DotEnvSetting
	for _, f := range DotEnv(name, root, home) {
		s := DotEnvSetting{Path: f, Show: showPath(root, home, f)}
		data, err := regular.ReadFile(f, 1<<20)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrPermission):
			continue
		case err != nil:
			s.Unjudged = err
		default:
			s.Env = HookEnv(DotEnvNames(data))
		}
		if s.Unjudged != nil || len(s.Env) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// DotEnvNames returns the variables a .env text sets, as dotenv parses it.
func DotEnvNames(data []byte) []string {
	var out []string
	for line := range strings.Lines(string(data)) {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "export "))
		k, _, ok := strings.Cut(line, "=")
		if !ok {
			k, _, ok = strings.Cut(line, ":") // dotenv takes KEY: VALUE too
		}
		if k = strings.TrimSpace(k); ok && k != "" && !strings.HasPrefix(k, "#") {
			out = append(out, k)
		}
	}
	return out
}

// DotEnvSetting is a loaded .env file that sets HookEnv, or that could not be judged.
type DotEnvSetting struct {
	Path, Show string   // Show: relative to the root, or ~/…, else Path
	Env        []string // the variables (HookEnv)
	Unjudged   error
}

// What says what is wrong with the file, after its name.
func (s DotEnvSetting) What() string {
	if s.Unjudged != nil {
		why := s.Unjudged
		if pe, ok := errors.AsType[*fs.PathError](why); ok {
			why = pe.Err // the path is said already
		}
		return "cannot be judged (" + why.Error() + ")"
	}
	return "sets " + strings.Join(s.Env, ", ")
}

// showPath is f relative to the nearer of root and home (~/…), else f.
func showPath(root, home, f string) string {
	r, h := paths.Display(root, f), paths.Display(home, f)
	if home != "" && h != f && (r == f || len(home) > len(root)) {
		return "~/" + h
	}
	return r
}

// hookEnv are the variables (path.Match patterns) that choose what the
// hooks and validators run, load, look at, and whom a judge's request
// reaches (a proxy the agent names would answer for the model). A settings
// file's env that sets one is judged as disableAllHooks is.
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
