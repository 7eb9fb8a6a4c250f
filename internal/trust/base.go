// Package trust declares the gate's trusted base: every program run and file read to reach
// a verdict; the guard's set, the client's OS wall and the validators' confinement derive from it.
package trust

import (
	"cmp"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	paths "github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/trust/program"
)

// Project is what a project's trusted base is computed from.
type Project struct {
	Root, Home string
	File       string             // the config file in use
	Config     *config.Config     // nil when it cannot be loaded
	Transcript string             // the session's; "" outside a hook
	Bins       []string           // more folders of the hook programs (gate init --bin)
	Registered []string           // programs about to be registered (gate init)
	Regs       []guard.Registered // the hook files' (guard.Registrations); nil: read here
	PluginRoot string             // CLAUDE_PLUGIN_ROOT, when the hooks run from the plugin
}

// Base is the trusted base of a project.
type Base struct {
	Root, Home string
	Shared     []guard.Protected // the project's (guard.Entries), the wall's too
	// Local are this machine's (user settings, the programs beside the running one, the plugin): not the team's wall's.
	Local []guard.Protected
}

// For returns p's trusted base, whole but for the run validators when it errs on reading them.
func For(p Project) (*Base, error) {
	if p.Regs == nil {
		p.Regs = guard.Registrations(p.Root, p.Home, nil)
	}
	telemetry := p.Config != nil && p.Config.Telemetry.Enabled
	dirs := append([]string{filepath.Join(p.Root, "bin")}, p.Bins...)
	if self, err := program.Self(); err == nil {
		dirs = append(dirs, filepath.Dir(self)) // in the project: protected as bin/ is
	}
	src := guard.Source{Root: p.Root, Home: p.Home, File: p.File, Commands: programsIn(dirs, telemetry),
		Transcript: p.Transcript, Registered: p.Registered}
	for _, r := range p.Regs {
		if r.Path != "" {
			src.Registered = append(src.Registered, r.Path)
		}
	}
	var err error
	var vs []*config.Validator
	if p.Config == nil {
		src.StateDir, _ = config.ReadStateDir(p.File, p.Root)
	} else if src.StateDir, src.Protect = p.Config.StateDir(), p.Config.Settings.Protect; src.Protect == nil || len(src.Protect) > 0 {
		vs, err = p.Config.Runs()
	}
	for _, v := range vs {
		src.Runs = append(src.Runs, guard.Run{Name: v.Name, Command: v.Run})
	}
	b := &Base{Root: p.Root, Home: p.Home, Shared: guard.Entries(src)}
	if len(b.Shared) > 0 { // protect = [] turns every wall off
		b.Local = local(p, telemetry)
	}
	return b, err
}

// programsIn returns stopgate's programs in dirs: the hooks, and gate-otel where it is or telemetry runs it.
func programsIn(dirs []string, telemetry bool) []string {
	var out []string
	for _, d := range dirs {
		for _, name := range hook.Programs {
			out = append(out, filepath.Join(d, name))
		}
		if p := filepath.Join(d, hook.Exporter); telemetry || isFile(p) {
			out = append(out, p)
		}
	}
	return out
}

func local(p Project, telemetry bool) []guard.Protected {
	var out []guard.Protected
	if p.Home != "" { // the user's settings come first
		out = append(out, guard.Protected{Path: guard.ClaudeSettings(p.Root, p.Home)[0].Path, Why: "it is Claude Code's user settings, whose hooks and env every session's hooks run with"})
	}
	if self, err := program.Self(); err == nil {
		for _, c := range programsIn([]string{filepath.Dir(self)}, telemetry) {
			if isFile(c) || filepath.Base(c) == hook.Exporter {
				out = append(out, guard.Protected{Path: c, Why: "it is one of stopgate's programs, beside the running one"})
			}
		}
	}
	if p.PluginRoot != "" && filepath.IsAbs(p.PluginRoot) {
		out = append(out, guard.Protected{Path: filepath.Clean(p.PluginRoot), Why: "it holds stopgate's plugin, whose scripts run the hooks", Dir: true})
	}
	return out
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// Guard is the tamper guard's protected set: the whole base.
func (b *Base) Guard() *guard.Set { return guard.New(b.Root, b.Home, slices.Concat(b.Shared, b.Local)) }

// Wall is the set the client's OS wall denies: the shared part.
func (b *Base) Wall() *guard.Set { return guard.New(b.Root, b.Home, b.Shared) }

// Empty reports whether nothing is protected ([settings] protect = []).
func (b *Base) Empty() bool { return len(b.Shared) == 0 }

// Confinement is a confined validator's paths and environment: read-only the base, Go's caches
// (the go.mod route builds the hooks from them) and HOME; writable the project, the XDG and npm
// caches and TMPDIR; its own GOCACHE. HOME's part only for a folder HOME, not / nor the root.
func (b *Base) Confinement() (readOnly, writable, env []string) {
	for _, p := range slices.Concat(b.Shared, b.Local) {
		readOnly = append(readOnly, filepath.FromSlash(p.Path))
	}
	h := filepath.Clean(b.Home)
	if st, err := os.Stat(h); b.Empty() || b.Home == "" || !filepath.IsAbs(h) || h == "/" || h == filepath.Clean(b.Root) || err != nil || !st.IsDir() {
		return readOnly, nil, nil
	}
	gopath, _, _ := strings.Cut(os.Getenv("GOPATH"), string(os.PathListSeparator))
	xdg := cmp.Or(os.Getenv("XDG_CACHE_HOME"), filepath.Join(h, ".cache"))
	goCaches := absolute(cmp.Or(os.Getenv("GOCACHE"), filepath.Join(xdg, "go-build")),
		cmp.Or(os.Getenv("GOMODCACHE"), filepath.Join(cmp.Or(gopath, filepath.Join(h, "go")), "pkg", "mod")))
	readOnly = append(append(readOnly, goCaches...), h)
	writable = append([]string{b.Root}, absolute(xdg, cmp.Or(os.Getenv("npm_config_cache"), filepath.Join(h, ".npm")), os.TempDir())...)
	if filepath.IsAbs(xdg) {
		goBuild := filepath.Join(xdg, "stopgate", "go-build")
		for _, d := range goCaches {
			os.Mkdir(d, 0o755) // mounted read-only rather than left for a validator to create
		}
		os.MkdirAll(goBuild, 0o755)
		env = []string{"GOCACHE=" + goBuild}
	}
	return readOnly, writable, env
}

func absolute(ps ...string) []string {
	var out []string
	for _, p := range ps {
		if filepath.IsAbs(p) {
			out = append(out, filepath.Clean(p))
		}
	}
	return out
}

// markName is the file detect leaves in a session's subagents folder once it arms: a sign `rm -rf` in the project cannot take.
const markName = "stopgate-armed"

// markFile is the session's mark; "" unless the transcript is a .jsonl outside root.
func markFile(transcript, root string) string {
	t := filepath.Clean(transcript)
	rel, err := filepath.Rel(root, t)
	if transcript == "" || !filepath.IsAbs(t) || filepath.Ext(t) != ".jsonl" || err == nil && !strings.HasPrefix(rel, "..") {
		return "" // not a transcript, or one the project holds
	}
	return filepath.Join(strings.TrimSuffix(t, ".jsonl"), markName)
}

// Mark records that the session armed a prompt of root; best effort (see reconcile).
func Mark(transcript, root string) {
	f := markFile(transcript, root)
	if f == "" || Marked(transcript, root) {
		return
	}
	if os.MkdirAll(filepath.Dir(f), 0o700) == nil {
		os.WriteFile(f, []byte(filepath.Clean(root)+"\n"), 0o600)
	}
}

// Marked reports whether Mark recorded the session for the project at root.
func Marked(transcript, root string) bool {
	data, err := regular.ReadFile(markFile(transcript, root), 64<<10) // "": no file
	return err == nil && strings.TrimSpace(string(data)) == filepath.Clean(root)
}

// dotEnvDirs are the clients that load .env files, and their folder.
var dotEnvDirs = map[string]string{
	client.Gemini.Name: path.Dir(client.Gemini.HookFile), client.Qwen.Name: path.Dir(client.Qwen.HookFile),
}

// dotEnvPaths are where the client named looks for a .env, from the root up to HOME (or /), then
// HOME's (Gemini CLI's findEnvFile, Qwen Code's findEnvFiles): every one, the agent may reorder them.
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

// DotEnvWrite judges a write leaving text in p, absolute: the HookEnv variables text sets when p is
// a .env the client named loads (an LD_PRELOAD, not a DATABASE_URL), text read only then; else nil.
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

// DotEnvHookEnv returns the .env files the client named loads that set a HookEnv variable, or that
// cannot be judged (a named pipe, over 1 MiB); one the gate may not open the client cannot read either.
func DotEnvHookEnv(name, root, home string) []DotEnvSetting {
	var out []DotEnvSetting
	for _, f := range dotEnvPaths(name, root, home) {
		if st, err := os.Stat(f); err != nil || st.IsDir() {
			continue // none there: nothing loaded
		}
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

// hookEnv are the variables (path.Match patterns) that choose what the hooks and validators run,
// load, look at, and whom a judge's request reaches: setting one is judged as disableAllHooks is.
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
		if !slices.Contains(out, n) && slices.ContainsFunc(hookEnv, func(p string) bool { ok, _ := path.Match(p, n); return ok }) {
			out = append(out, n)
		}
	}
	return out
}
