package trust

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/client"
	paths "github.com/stopgate/stopgate/internal/project"
)

// dotEnvDirs are the clients that load .env files, and their folder.
var dotEnvDirs = map[string]string{
	client.Gemini.Name: path.Dir(client.Gemini.HookFile), client.Qwen.Name: path.Dir(client.Qwen.HookFile),
}

// DotEnv are the .env files the client named loads into its own
// environment, and so hands to every hook, that exist (dotEnvPaths).
func DotEnv(name, root, home string) []string {
	var out []string
	for _, c := range dotEnvPaths(name, root, home) {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			out = append(out, c)
		}
	}
	return out
}

// dotEnvPaths are where the client named looks for a .env, existing or
// not: from the project root up to HOME (or /), the client's folder's
// .env then the folder's own, then ~/.<client>/.env and ~/.env
// (findEnvFile in Gemini CLI's bundle, findEnvFiles in Qwen Code's).
// Gemini CLI loads the first found and Qwen Code the first beside the
// user's; every one is listed, since which comes first is the agent's to
// change. nil for other clients.
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

// DotEnvWrite judges a write that leaves text in the file p (absolute)
// for the client named: the variables of the trusted base's environment
// text sets when p is a .env the client loads (dotEnvPaths), so the guard
// refuses an LD_PRELOAD and lets DATABASE_URL by. nil otherwise. text is
// asked only for such a file: the guard runs on every Edit.
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

// DotEnvNames returns the variables a .env file's text sets, as dotenv
// parses it: KEY=VALUE lines, "export " allowed, # comments skipped.
func DotEnvNames(data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		line = strings.TrimSpace(strings.TrimPrefix(line, "export "))
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

// DotEnvSetting is a loaded .env file that sets variables of the trusted
// base's environment.
type DotEnvSetting struct {
	Path, Show string   // Show: relative to the root, or ~/…, else Path
	Env        []string // the variables (HookEnv)
}

// DotEnvHookEnv returns the .env files name's client loads (DotEnv) that
// set a variable of the trusted base's environment (HookEnv): the client
// hands them to every hook, as a settings file's env. An unreadable file
// is left out: the client cannot read it either.
func DotEnvHookEnv(name, root, home string) []DotEnvSetting {
	var out []DotEnvSetting
	for _, f := range DotEnv(name, root, home) {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if env := HookEnv(DotEnvNames(data)); len(env) > 0 {
			out = append(out, DotEnvSetting{Path: f, Show: showPath(root, home, f), Env: env})
		}
	}
	return out
}

// showPath is f relative to the nearer of root and home (~/…), else f.
func showPath(root, home, f string) string {
	r, h := paths.Display(root, f), paths.Display(home, f)
	if home != "" && h != f && (r == f || len(home) > len(root)) {
		return "~/" + h
	}
	return r
}
