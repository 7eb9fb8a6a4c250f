package gate

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/reuse"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/stop"
	"github.com/stopgate/stopgate/internal/telemetry"
	"github.com/stopgate/stopgate/internal/trust"
)

// finding is one line of `gate check`: where (file[:line[:column]]), what, how to fix it.
type finding struct {
	loc     string
	warning bool
	msg     string
	hint    string
}

// String spells out control characters (cli.Visible): the text comes from files the agent writes.
func (f finding) String() string {
	s := cli.Visible(f.loc, true) + ": "
	if f.warning {
		s += "warning: "
	}
	s += cli.Visible(f.msg, true)
	if f.hint != "" {
		s += "\n    hint: " + cli.Visible(f.hint, true)
	}
	return s
}

// warn is a warning finding.
func warn(loc, msg, hint string) []finding {
	return []finding{{loc: loc, warning: true, msg: msg, hint: hint}}
}

// runCheck is `gate check`: the config, its files, the hook registrations; exit 1 on an error.
func runCheck(env *cli.Env, args []string) error {
	fl := flags("check")
	plugin := fl.String("plugin", "", "check the hooks of the plugin in `DIR` instead of .claude/settings.json")
	clientName := clientFlag(fl, "check the hooks of the agent `CLIENT` only")
	ws, _, err := parseVerb(env, fl, args, 0)
	if err != nil {
		return err
	}
	cfg, fs, err := configFindings(ws)
	if err != nil {
		return err
	}
	clients, err := checkedClients(ws.root, *clientName)
	if err != nil {
		return usageError("check", err)
	}
	hooks, summary := hookCheck(env, ws, cfg, *plugin, *clientName, clients)
	fs = append(fs, hooks...)
	fs = append(fs, goToolFindings(ws)...)
	tel, telFindings := telemetryCheck(env, ws, cfg)
	fs = append(fs, telFindings...)
	return checkReport(env, cfg, fs, clients, tel, summary)
}

func configFindings(ws workspace) (*config.Config, []finding, error) {
	var fs []finding
	cfg, problems, err := config.Inspect(ws.file, ws.root, config.Project)
	switch {
	case errors.Is(err, os.ErrNotExist):
		fs = append(fs, finding{loc: ws.rel(ws.file), msg: "does not exist", hint: `"gate init" writes a starter`})
	case err != nil:
		return nil, nil, err
	}
	for _, p := range problems {
		loc, msg := p.File, p.Msg
		if p.Line > 0 {
			loc += fmt.Sprintf(":%d", p.Line)
		}
		if p.Key != "" {
			msg = p.Key + ": " + msg
		}
		fs = append(fs, finding{loc: loc, warning: p.Warning, msg: msg, hint: p.Hint})
	}
	return cfg, fs, nil
}

// hookCheck returns the registrations' findings and Claude Code's wall summary ("": unchecked).
func hookCheck(env *cli.Env, ws workspace, cfg *config.Config, plugin, clientName string, clients []*client.Client) ([]finding, string) {
	var fs []finding
	claude, home := settingsFiles(env, ws.root), env.Getenv("HOME")
	var regs []guard.Registered
	if clientName == "" || clientName == "claude" || runsClaude(clientName) {
		regs = claude.registrations(ws.root, home)
	} else {
		regs = guard.Registrations(ws.root, home, nil)
	}
	if plugin == "" && (clientName == "" || clientName == "claude") && !claudeRegistered(regs) {
		plugin = installedPlugin(home, claude.paths()) // the marketplace's plugin registers them
	}
	// With no --client, Claude Code is checked when registered, or when no client is.
	summary := ""
	if clientName == "claude" || clientName == "" && (plugin != "" || len(clients) == 0 || claudeRegistered(regs)) || runsClaude(clientName) {
		fs = append(fs, hookFindings(env, ws, cfg, plugin, claude)...)
		fs = append(fs, switchFindings(claude)...)
		var wall []finding
		wall, summary = wallFindings(env, ws, cfg, claude, regs)
		fs = append(fs, wall...)
	}
	for _, c := range clients {
		fs = append(fs, clientFindings(env, ws, cfg, c)...)
	}
	return append(fs, registeredFindings(env, ws, cfg, regs)...), summary
}

// runsClaude reports whether the client of name runs Claude Code's hooks (VS Code).
func runsClaude(name string) bool {
	c := client.Named(name)
	return c != nil && c.HookFile == "" && slices.Contains(c.Runs, client.Claude)
}

func checkReport(env *cli.Env, cfg *config.Config, fs []finding, clients []*client.Client, tel, summary string) error {
	errs, warns := 0, 0
	for _, f := range fs {
		fmt.Fprintln(env.Stdout, f)
		if f.warning {
			warns++
		} else {
			errs++
		}
	}
	for _, c := range clients {
		for _, l := range c.Limits {
			fmt.Fprintf(env.Stdout, "note: %s: %s\n", c.Name, l)
		}
		fmt.Fprintf(env.Stdout, "note: %s: wall: %s\n", c.Name, c.WallLeft)
	}
	if tel != "" {
		fmt.Fprintln(env.Stdout, tel)
	}
	if errs == 0 {
		names := []string{}
		if summary != "" {
			names = append(names, client.Claude.Name)
		}
		for _, c := range clients {
			names = append(names, c.Name)
		}
		reuse.Lines(env.Stdout, cfg, env.Getenv("HOME"), names)
	}
	if errs+warns == 0 {
		if summary != "" {
			summary = "; " + summary
		}
		fmt.Fprintf(env.Stdout, "ok: %s, %s; every stopgate hook registered%s\n",
			cli.Plural(len(cfg.Mappings), "mapping", "mappings"), cli.Plural(len(cfg.Validators), "validator", "validators"), summary)
		return nil
	}
	fmt.Fprintf(env.Stdout, "%s, %s\n", cli.Plural(errs, "error", "errors"), cli.Plural(warns, "warning", "warnings"))
	if errs > 0 {
		return cli.Exit(1)
	}
	return nil
}

// hookFindings checks Claude Code's registration: every hook, each program, the timeouts.
func hookFindings(env *cli.Env, ws workspace, cfg *config.Config, plugin string, claude *claudeSettings) []finding {
	candidates, initCmd := claude.sharedFirst(), `"gate init"`
	base := ws.root // where programs are shown from, and the plugin's root
	if plugin != "" {
		base = absFrom(env.Dir, plugin)
		file := filepath.Join(base, "hooks", "hooks.json")
		candidates = readSettings([]guard.SettingsFile{{Path: file, Name: shown(env.Dir, file)}})
		initCmd = `"gate init --plugin ` + cli.ShellQuote(plugin) + `"`
	}
	vars := map[string]string{"CLAUDE_PROJECT_DIR": ws.root, "CLAUDE_PLUGIN_ROOT": base}
	want := expected()
	var out []finding
	registered := make([]bool, len(want))
	uncovered := make([]string, len(want)) // tools a partial registration lacks
	unreadable, there := false, false
	for _, src := range candidates {
		if errors.Is(src.err, fs.ErrNotExist) {
			continue
		}
		there = true // a file that cannot be read is there: what it registers is unknown
		if src.err != nil {
			unreadable = true
			out = append(out, finding{loc: src.Name, msg: src.err.Error()})
			continue
		}
		found, err := src.doc.Lookup(want)
		if err != nil {
			unreadable = true
			out = append(out, fileError(src.Name, "Claude Code", err))
			continue
		}
		for i, fd := range found {
			if !fd.Registered {
				if fd.Uncovered != "" && fd.Uncovered != fd.Matcher {
					uncovered[i] = fd.Uncovered
				}
				continue
			}
			registered[i] = true
			loc := fmt.Sprintf("%s:%d", src.Name, fd.Line)
			out = append(out, registeredHook(env, cfg, fd, loc, base, vars, initCmd, client.Claude.Name)...)
			out = append(out, onFailureFinding(fd, loc, initCmd)...)
		}
	}
	primary := candidates[0].Name
	if !there {
		return append(out, finding{loc: primary, msg: "does not exist: no stopgate hook is registered",
			hint: initCmd + " registers them"})
	}
	for i, h := range want {
		// Behind a file that cannot be read, "not registered" would be a guess.
		if !registered[i] && !unreadable {
			msg := h.String() + " is not registered"
			if uncovered[i] != "" {
				msg = h.String() + " is registered without " + uncovered[i]
			}
			out = append(out, unregistered(primary, h, msg, initCmd))
		}
	}
	out = dedupe(out)
	sortByLocation(out)
	return out
}

func registeredHook(env *cli.Env, cfg *config.Config, fd settings.Found, loc, base string, vars map[string]string, initCmd, client string) []finding {
	out := programFinding(env, fd.Command, loc, base, vars)
	out = append(out, earlierLauncher(fd.Command, loc, initCmd)...)
	return append(out, timeoutFinding(cfg, fd, loc, client)...)
}

// unregistered is hook h missing from loc: a warning for testhook's (--no-testhook).
func unregistered(loc string, h settings.Hook, msg, initCmd string) finding {
	f := finding{loc: loc, msg: msg, hint: initCmd + " registers every stopgate hook and keeps the rest of the file"}
	if settings.Program(h.Command) == hook.Testhook {
		f.warning = true
		f.msg += ": the test runner's words and its --auto mode are off (as gate init --no-testhook leaves them)"
	}
	return f
}

// fileError is the finding of a hook file that does not parse, at its line and column.
func fileError(name, client string, err error) finding {
	f := finding{loc: name, msg: err.Error(), hint: client + " cannot read this file either: fix it by hand"}
	var se *settings.Error
	if errors.As(err, &se) {
		f.loc, f.msg = fmt.Sprintf("%s:%d:%d", name, se.Line, se.Column), se.Msg
	}
	return f
}

// sortByLocation orders findings by file (first seen), then by line.
func sortByLocation(fs []finding) {
	rank := map[string]int{}
	for _, f := range fs {
		file, _ := splitLoc(f.loc)
		if _, ok := rank[file]; !ok {
			rank[file] = len(rank)
		}
	}
	slices.SortStableFunc(fs, func(a, b finding) int {
		fa, la := splitLoc(a.loc)
		fb, lb := splitLoc(b.loc)
		return cmp.Or(cmp.Compare(rank[fa], rank[fb]), cmp.Compare(la, lb))
	})
}

func splitLoc(loc string) (file string, line int) {
	parts := strings.SplitN(loc, ":", 3)
	if len(parts) > 1 {
		line, _ = strconv.Atoi(parts[1])
	}
	return parts[0], line
}

// programFinding warns when a hook's program is not where its command says
// (vars: the client's); it names the last candidate (the plugin's own).
func programFinding(env *cli.Env, command, loc, base string, vars map[string]string) []finding {
	var last string
	for _, p := range settings.Paths(command) {
		path := os.Expand(p, func(v string) string {
			if s, ok := vars[v]; ok {
				return s
			}
			return env.Getenv(v)
		})
		if !filepath.IsAbs(path) {
			return nil // on $PATH, or relative to where the client runs: not ours to judge
		}
		last = path
		matches, _ := filepath.Glob(path)
		if slices.ContainsFunc(matches, executable) {
			return nil
		}
	}
	in := binInstall(base, filepath.Dir(last))
	if strings.Contains(last, "*") { // npm's platform package, as the shell finds it
		in = npmProject("")
	}
	msg := fmt.Sprintf("hook program %s is missing or not executable", project.Display(base, last))
	if _, ok := settings.Candidates(command); ok {
		msg += ": until it is installed, its launcher answers for it (a stop halts, a guarded tool call is refused)"
	}
	return warn(loc, msg, "install it ("+in.method+"): "+in.command)
}

func uninstallCmd(initCmd string) string {
	return strings.Replace(initCmd, "gate init", "gate uninstall", 1)
}

// earlierLauncher warns of an older launcher, which let a stop pass when the program could not run.
func earlierLauncher(command, loc, initCmd string) []finding {
	if !settings.Earlier(command) {
		return nil
	}
	undo := uninstallCmd(initCmd)
	if strings.Contains(initCmd, "--plugin") {
		undo = "deleting the plugin's hooks/hooks.json"
	}
	return warn(loc, "registered by an earlier gate init, whose launcher lets a stop pass when the hook program is there but cannot run (built for another platform, a noexec mount)",
		"re-register: "+undo+", then "+initCmd+" (with the options it was given)")
}

// onFailureFinding warns of a guard hook without onFailure "block".
func onFailureFinding(fd settings.Found, loc, initCmd string) []finding {
	if settings.Program(fd.Command) != hook.Detect || !guards(fd.Event) || fd.OnFailure == "block" {
		return nil
	}
	return warn(loc, fd.Hook.String()+` has no "onFailure": "block": if the guard cannot start or times out, the call it guards goes ahead`,
		`add "onFailure": "block" to it, or re-register: `+uninstallCmd(initCmd)+", then "+initCmd)
}

// timeoutFinding fails a gate hook told a longer timeout than the client
// enforces, or with a validator that outlasts its deadline (stop/deadline.go).
func timeoutFinding(cfg *config.Config, fd settings.Found, loc, client string) []finding {
	if settings.Program(fd.Command) != hook.Gate || fd.Event == hook.ConfigChange {
		return nil // ConfigChange runs no validator
	}
	flag := flagTimeout(fd.Command)
	told := stop.HookTimeout(client, flag)
	enforced := stop.HookTimeout(client, time.Duration(fd.Timeout)*time.Second)
	if told > enforced {
		how := fmt.Sprintf("tells the gate (--timeout) it has %s", told)
		if flag == 0 {
			how = fmt.Sprintf("gives the gate no --timeout, so it takes the client's default of %s", told)
		}
		return []finding{{loc: loc,
			msg:  fmt.Sprintf("%s %s, but the client kills it at %s: a stop still being judged then passes unanswered", fd.Hook.String(), how, enforced),
			hint: "give the hook's command --timeout with the hook's timeout in seconds (gate init writes 600 for both)"}}
	}
	if cfg == nil {
		return nil
	}
	budget := told - stop.Margin(told)
	var longest *config.Validator
	for _, name := range cfg.Order {
		if v := cfg.Validators[name]; (v.Run != "" || v.Judge != nil) && (longest == nil || v.Timeout > longest.Timeout) {
			longest = v
		}
	}
	if longest == nil || longest.Timeout <= budget {
		return nil
	}
	return []finding{{loc: loc,
		msg: fmt.Sprintf("%s has a timeout of %s, but validator %q may run for %s: the gate answers %s before the hook's timeout, and kills it then (it fails as timed out)",
			fd.Hook.String(), told, longest.Name, longest.Timeout, stop.Margin(told)),
		hint: fmt.Sprintf("raise the hook's timeout and --timeout above %s, or lower the validator's timeout", longest.Timeout+stop.Margin(told))}}
}

func flagTimeout(command string) time.Duration {
	words := strings.Fields(settings.Args(command))
	for i, w := range words {
		v, ok := strings.CutPrefix(strings.TrimLeft(w, "-"), "timeout=")
		if !ok && (w == "--timeout" || w == "-timeout") && i+1 < len(words) {
			v, ok = words[i+1], true
		}
		if n, err := strconv.Atoi(v); ok && err == nil && strings.HasPrefix(w, "-") {
			return time.Duration(n) * time.Second
		}
	}
	return 0
}

// dedupe drops repeated findings: a missing program is reported once.
func dedupe(fs []finding) []finding {
	seen := map[string]bool{}
	return slices.DeleteFunc(fs, func(f finding) bool {
		dup := seen[f.msg]
		seen[f.msg] = true
		return dup
	})
}

// clientFindings checks another client's registration, env and wall.
func clientFindings(env *cli.Env, ws workspace, cfg *config.Config, c *client.Client) []finding {
	if c.HookFile == "" {
		return nil // no registration of its own: its notes say which it runs
	}
	if c.IsPlugin() {
		return append(pluginFindings(ws, c), clientWallFindings(env, ws, c)...)
	}
	initCmd := `"gate init --client ` + c.Name + `"`
	out := capFinding(ws, cfg, c)
	data, err := os.ReadFile(filepath.Join(ws.root, filepath.FromSlash(c.HookFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return append(out, finding{loc: c.HookFile, msg: "does not exist: no stopgate hook is registered for " + c.Title,
			hint: initCmd + " registers them"})
	}
	if err != nil {
		return append(out, finding{loc: c.HookFile, msg: err.Error()})
	}
	found, err := c.Lookup(data, clientWanted(c, ws.root, binInstall(ws.root, "bin"), true))
	if err != nil {
		return append(out, fileError(c.HookFile, c.Title, err))
	}
	vars := map[string]string{} // the project variables the clients set
	for _, c := range client.All {
		if c.ProjectVar != "" {
			vars[c.ProjectVar] = ws.root
		}
	}
	for _, fd := range found {
		if !fd.Registered {
			out = append(out, unregistered(c.HookFile, fd.Hook, fd.Hook.String()+" is not registered", initCmd))
			continue
		}
		fd.Timeout /= c.Unit // in seconds
		out = append(out, registeredHook(env, cfg, fd, c.HookFile, ws.root, vars, initCmd, c.Name)...)
	}
	out = append(out, clientEnvFindings(ws, env.Getenv("HOME"), c)...)
	out = append(out, clientWallFindings(env, ws, c)...)
	return dedupe(out)
}

// hooksEnv are the clients that hand the hooks an env, and whether the top-level env counts too.
var hooksEnv = map[string]bool{client.Gemini.Name: false, client.Qwen.Name: true}

// clientEnvFindings judges the env c's hook files and .env files hand the hooks.
func clientEnvFindings(ws workspace, home string, c *client.Client) []finding {
	top, ok := hooksEnv[c.Name]
	if !ok {
		return nil
	}
	var out []finding
	for loc, path := range map[string]string{c.HookFile: filepath.Join(ws.root, c.HookFile), "~/" + c.HookFile: filepath.Join(home, c.HookFile)} {
		data, err := os.ReadFile(path)
		if err != nil || home == "" && loc[0] == '~' {
			continue
		}
		d := settings.Parse(data)
		names := d.HookEnv()
		if top {
			names = append(names, d.Env()...)
		}
		out = append(out, envFindings(loc, names)...)
	}
	slices.SortFunc(out, func(a, b finding) int { return strings.Compare(a.loc, b.loc) })
	for _, f := range trust.DotEnvHookEnv(c.Name, ws.root, home) {
		out = append(out, finding{loc: f.Show, msg: "sets " + strings.Join(f.Env, ", ") + ", which " + c.Title +
			" loads into its environment and hands every hook and validator: it chooses the programs they run",
			hint: "remove it from the file, and set it in the shell that starts the client"})
	}
	return out
}

// envFindings are the trusted base's variables (trust.HookEnv) an env at loc sets.
func envFindings(loc string, names []string) []finding {
	env := trust.HookEnv(names)
	if len(env) == 0 {
		return nil
	}
	return []finding{{loc: loc, msg: "env sets " + strings.Join(env, ", ") + ", which every hook and validator runs with: it chooses the programs they run",
		hint: "remove it from env, and set it in the shell that starts the client"}}
}

// capFinding warns when the client's own block cap ends the loop before max_blocks.
func capFinding(ws workspace, cfg *config.Config, c *client.Client) []finding {
	if cfg == nil || c.BlockCap == 0 || cfg.Settings.MaxBlocks < c.BlockCap {
		return nil
	}
	return warn(ws.rel(ws.file),
		fmt.Sprintf("settings.max_blocks is %d, but %s lets the agent stop after %d consecutive blocks: the loop would end there, unchecked, instead of halting",
			cfg.Settings.MaxBlocks, c.Title, c.BlockCap),
		fmt.Sprintf("set max_blocks below %d", c.BlockCap))
}

// checkedClients are the one --client names, or every client whose file the project has.
func checkedClients(root, name string) ([]*client.Client, error) {
	has := func(c *client.Client) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(c.HookFile)))
		return c.HookFile != "" && err == nil
	}
	if name != "" {
		c, err := clientNamed(name)
		if err != nil || c == nil {
			return nil, err
		}
		if c.HookFile != "" {
			return []*client.Client{c}, nil
		}
		return append(slices.DeleteFunc(slices.Clone(c.Runs), func(r *client.Client) bool { return r == client.Claude || !has(r) }), c), nil
	}
	out := slices.DeleteFunc(slices.Clone(agentClients), func(c *client.Client) bool { return !has(c) })
	for _, c := range agentClients {
		if c.HookFile == "" && slices.ContainsFunc(c.Runs, func(r *client.Client) bool { return slices.Contains(out, r) }) {
			out = append(out, c)
		}
	}
	return out, nil
}

// goToolFindings warns, where go.mod pins stopgate as a tool, of what makes go tool build another.
func goToolFindings(ws workspace) []finding {
	if !goTool(ws.root) {
		return nil
	}
	var locs []string
	data, _ := os.ReadFile(filepath.Join(ws.root, "go.mod"))
	for n, line := range strings.Split(string(data), "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == "replace" {
			locs = append(locs, "go.mod:"+strconv.Itoa(n+1))
			break
		}
	}
	for _, name := range []string{"go.work", "vendor/modules.txt"} {
		if _, err := os.Stat(filepath.Join(ws.root, name)); err == nil {
			locs = append(locs, name)
		}
	}
	var fs []finding
	for _, loc := range locs {
		// GOWORK=off: in a workspace, go list -m names no version.
		fs = append(fs, warn(loc, "if this replaces, vendors or puts in a workspace stopgate or a module it uses, the stopgate plugin does not run the go tool it builds, so with no bin/ every stop halts",
			"install stopgate as published in bin/, which the hooks run first: "+goInstall(`"$PWD"/bin`, "@$(GOWORK=off go list -m -f '{{.Version}}' "+goModule+")"))...)
	}
	return fs
}

// registeredFindings fails each hook program outside the wall: the agent could replace it unseen.
func registeredFindings(env *cli.Env, ws workspace, cfg *config.Config, regs []guard.Registered) []finding {
	base, _ := trust.For(trust.Project{Root: ws.root, Home: env.Getenv("HOME"), File: ws.file, Config: cfg, Regs: regs})
	set := base.Wall()
	if set.Empty() {
		return nil
	}
	var out []finding
	for _, r := range regs {
		if r.Path != "" && set.CheckPath(r.Path, ws.root) != nil {
			continue
		}
		what := "a program the tamper guard cannot locate (a bare name or a variable the client does not set)"
		if r.Path != "" {
			what = r.Path + ", outside the protected set"
		}
		out = append(out, finding{loc: r.File, msg: fmt.Sprintf("`%s` runs %s: the agent could replace it unseen", cli.Clip(r.Command, 80, "…"), what),
			hint: "register the hooks by an absolute path or one under the project: gate init --bin DIR"})
	}
	return dedupe(out)
}

func claudeRegistered(regs []guard.Registered) bool {
	return slices.ContainsFunc(regs, func(r guard.Registered) bool { return strings.HasPrefix(r.File, ".claude/") })
}

// telemetryCheck is check's line on telemetry, and a warning when its exporter is missing.
func telemetryCheck(env *cli.Env, ws workspace, cfg *config.Config) (string, []finding) {
	if cfg == nil || !cfg.Telemetry.Enabled && cfg.Telemetry.Endpoint == "" {
		return "", nil
	}
	line := "telemetry: " + telemetry.Describe(cfg.Telemetry, env.Getenv)
	if !telemetry.Enabled(cfg.Telemetry, env.Getenv) {
		return line, nil
	}
	if _, err := telemetry.ExporterPath(); err != nil {
		return line, warn(ws.rel(ws.file), "telemetry is on, but "+err.Error(),
			"stops are judged and logged as ever; nothing is exported until it is installed")
	}
	return line, nil
}
