package trust

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/client"
	paths "github.com/stopgate/stopgate/internal/project"
)

// dotEnvDirs are the clients that load .env files, and their folder.
var dotEnvDirs = map[string]string{
	client.Gemini.Name: path.Dir(client.Gemini.HookFile), client.Qwen.Name: path.Dir(client.Qwen.HookFile),
}

// DotEnv are the .env files the client named loads into its own
// environment, and so hands to every hook, that exist: from the project
// root up to HOME (or /), the client's folder's .env then the folder's
// own, then ~/.<client>/.env and ~/.env (findEnvFile in Gemini CLI's
// bundle, findEnvFiles in Qwen Code's). Gemini CLI loads the first found
// and Qwen Code the first beside the user's; every one is listed, since
// which comes first is the agent's to change. nil for other clients.
func DotEnv(name, root, home string) []string {
	dir, ok := dotEnvDirs[name]
	if !ok {
		return nil
	}
	var cands []string
	for d := filepath.Clean(root); d != home; d = filepath.Dir(d) {
		cands = append(cands, filepath.Join(d, dir, ".env"), filepath.Join(d, ".env"))
		if filepath.Dir(d) == d {
			break
		}
	}
	if home != "" {
		cands = append(cands, filepath.Join(home, dir, ".env"), filepath.Join(home, ".env"))
	}
	var out []string
	for _, c := range cands {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			out = append(out, c)
		}
	}
	return out
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
