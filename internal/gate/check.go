package gate

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
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
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/reuse"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/stop"
	"github.com/stopgate/stopgate/internal/telemetry"
	"github.com/stopgate/stopgate/internal/trust"
	"github.com/stopgate/stopgate/internal/validator"
)

// finding is one line of `gate check`: where (file[:line[:column]]), what, how to fix it.
type finding struct {
	loc       string
	warning   bool
	msg, hint string
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

// warn and fail are a finding: a warning, or an error gate check exits 1 on.
func warn(loc, msg, hint string) []finding { return []finding{{loc, true, msg, hint}} }
func fail(loc, msg, hint string) []finding { return []finding{{loc, false, msg, hint}} }

// runCheck is `gate check`: the config, its files, the hook registrations; exit 1 on an error.
func runCheck(env *cli.Env, args []string) error {
	fl := flags("check")
	plugin := fl.String("plugin", "", "check the hooks of the plugin in `DIR` instead of .claude/settings.json")
	clientName := clientFlag(fl, "check the hooks of the agent `CLIENT` only")
	ws, _, err := parseVerb(env, fl, args, 0)
	if err != nil {
		return err
	}
	cfg, problems, err := config.Inspect(ws.file, ws.root, config.Project)
	var fs []finding
	if errors.Is(err, os.ErrNotExist) {
		fs = fail(ws.rel(ws.file), "does not exist", `"gate init" writes a starter`)
	} else if err != nil {
		return err
	}
	for _, p := range problems {
		loc, msg := p.File, p.Msg
		if p.Line > 0 {
			loc += fmt.Sprintf(":%d", p.Line)
		}
		if p.Key != "" {
			msg = p.Key + ": " + msg
		}
		fs = append(fs, finding{loc, p.Warning, msg, p.Hint})
	}
	clients, err := checkedClients(ws.root, *clientName)
	if err != nil {
		return usageError("check", err)
	}
	hooks, summary := hookCheck(env, ws, cfg, *plugin, *clientName, clients)
	tel, telFindings := telemetryCheck(env, ws, cfg)
	fs = slices.Concat(fs, hooks, goToolFindings(ws), telFindings)
	return checkReport(env, cfg, fs, clients, tel, summary)
}

// hookCheck returns the registrations' findings and Claude Code's wall summary ("": unchecked).
func hookCheck(env *cli.Env, ws workspace, cfg *config.Config, plugin, clientName string, clients []*client.Client) ([]finding, string) {
	claude, home := settingsFiles(env, ws.root), env.Getenv("HOME")
	regs := claude.registrations(ws.root, home)
	set := wallOf(trust.Project{Root: ws.root, Home: home, File: ws.file, Config: cfg, Regs: regs})
	c := client.Named(clientName)
	runsClaude := c != nil && c.HookFile == "" && slices.Contains(c.Runs, client.Claude) // VS Code
	if plugin == "" && (clientName == "" || c == client.Claude) && !claudeRegistered(regs) {
		plugin = installedPlugin(home, claude.texts) // the marketplace's plugin registers them
	}
	// With no --client, Claude Code is checked when registered, or when no client is.
	var fs []finding
	summary := ""
	if c == client.Claude || clientName == "" && (plugin != "" || len(clients) == 0 || claudeRegistered(regs)) || runsClaude {
		var wall []finding
		wall, summary = wallFindings(env, ws, cfg, claude, set)
		fs = slices.Concat(claudeHookFindings(env, ws, cfg, plugin, claude), switchFindings(claude), wall)
	}
	for _, c := range clients {
		fs = append(fs, clientFindings(env, ws, cfg, c, set)...)
	}
	return append(fs, registeredFindings(ws, set, regs)...), summary
}

func checkReport(env *cli.Env, cfg *config.Config, fs []finding, clients []*client.Client, tel, summary string) error {
	errs := 0
	for _, f := range fs {
		fmt.Fprintln(env.Stdout, f)
		if !f.warning {
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
		names := each(clients, func(c *client.Client) string { return c.Name })
		if summary != "" {
			names = append([]string{client.Claude.Name}, names...)
		}
		reuse.Lines(env.Stdout, cfg, env.Getenv("HOME"), names)
	}
	if len(fs) == 0 {
		if summary != "" {
			summary = "; " + summary
		}
		fmt.Fprintf(env.Stdout, "ok: %s, %s; every stopgate hook registered%s\n",
			cli.Plural(len(cfg.Mappings), "mapping", "mappings"), cli.Plural(len(cfg.Validators), "validator", "validators"), summary)
		return nil
	}
	fmt.Fprintf(env.Stdout, "%s, %s\n", cli.Plural(errs, "error", "errors"), cli.Plural(len(fs)-errs, "warning", "warnings"))
	if errs > 0 {
		return cli.Exit(1)
	}
	return nil
}

// claudeHookFindings checks Claude Code's registration in its settings, or in the plugin in dir plugin.
func claudeHookFindings(env *cli.Env, ws workspace, cfg *config.Config, plugin string, claude *claudeSettings) []finding {
	files, base, initCmd := claude.sharedFirst(), ws.root, `"gate init"` // base: where programs are shown from
	if plugin != "" {
		base = absFrom(env.Dir, plugin)
		file := filepath.Join(base, pluginHooks)
		files = readSettings([]guard.SettingsFile{{Path: file, Name: shown(env.Dir, file)}})
		initCmd = `"gate init --plugin ` + cli.ShellQuote(plugin) + `"`
	}
	return hookFindings(env, ws, cfg, client.Claude, files, expected(), base, initCmd)
}

// clientFindings checks another client's registration, env and wall.
func clientFindings(env *cli.Env, ws workspace, cfg *config.Config, c *client.Client, set *guard.Set) []finding {
	if c.HookFile == "" {
		return nil // no registration of its own: its notes say which it runs
	}
	if c.IsPlugin() {
		return append(pluginFindings(ws, c), clientWallFindings(env, ws, c, set)...)
	}
	files := readSettings([]guard.SettingsFile{{Path: filepath.Join(ws.root, filepath.FromSlash(c.HookFile)), Name: c.HookFile}})
	hooks := hookFindings(env, ws, cfg, c, files, hooksOf(c, binInstall(ws.root, "bin"), ws.root, true), ws.root, `"gate init --client `+c.Name+`"`)
	return dedupe(slices.Concat(capFinding(ws, cfg, c), hooks, clientEnvFindings(ws, env.Getenv("HOME"), c), clientWallFindings(env, ws, c, set)))
}

// hookFindings checks c's registration of want in files (init writes the first): hooks, programs (shown from base), timeouts.
func hookFindings(env *cli.Env, ws workspace, cfg *config.Config, c *client.Client, files []settingsText, want []settings.Hook, base, initCmd string) []finding {
	vars := map[string]string{"CLAUDE_PLUGIN_ROOT": base} // the variables the clients set
	for _, c := range client.All {
		vars[c.ProjectVar] = ws.root
	}
	var out []finding
	registered := make([]bool, len(want))
	uncovered := make([]string, len(want)) // tools a partial registration lacks
	unreadable, there := false, false
	for _, src := range files {
		if errors.Is(src.err, fs.ErrNotExist) {
			continue
		}
		there = true // a file that cannot be read is there: what it registers is unknown
		var found []settings.Found
		err := src.err
		if err == nil {
			found, err = c.Lookup(src.data, want)
		}
		if err != nil {
			unreadable = true
			f := errorFinding(src.Name, err)
			if src.err == nil { // not the client's to read either
				f.hint = c.Title + " cannot read this file either: fix it by hand"
			}
			out = append(out, f)
			continue
		}
		for i, fd := range found {
			if !fd.Registered {
				if c == client.Claude && fd.Uncovered != "" && fd.Uncovered != fd.Matcher {
					uncovered[i] = fd.Uncovered
				}
				continue
			}
			registered[i] = true
			fd.Timeout /= c.Unit // in seconds
			loc := src.Name
			if c == client.Claude {
				loc = fmt.Sprintf("%s:%d", src.Name, fd.Line)
			}
			out = slices.Concat(out, programFinding(env, fd.Command, loc, base, vars), earlierLauncher(fd.Command, loc, initCmd),
				timeoutFinding(cfg, fd, loc, c.Name), onFailureFinding(c, fd, loc, initCmd))
		}
	}
	primary := files[0].Name
	if !there {
		msg := "does not exist: no stopgate hook is registered"
		if c != client.Claude {
			msg += " for " + c.Title
		}
		return append(out, fail(primary, msg, initCmd+" registers them")...)
	}
	for i, h := range want {
		if registered[i] || unreadable { // behind a file that cannot be read, "not registered" would be a guess
			continue
		}
		f := finding{loc: primary, msg: h.String() + " is not registered", hint: initCmd + " registers every stopgate hook and keeps the rest of the file"}
		if uncovered[i] != "" {
			f.msg = h.String() + " is registered without " + uncovered[i]
		}
		if settings.Program(h.Command) == hook.Testhook { // gate init --no-testhook
			f.warning = true
			f.msg += ": the test runner's words and its --auto mode are off (as gate init --no-testhook leaves them)"
		}
		out = append(out, f)
	}
	return sortByLocation(dedupe(out))
}

// sortByLocation orders findings by file (first seen), then by line.
func sortByLocation(fs []finding) []finding {
	splitLoc := func(loc string) (file string, line int) {
		file, rest, _ := strings.Cut(loc, ":")
		line, _ = strconv.Atoi(strings.SplitN(rest, ":", 2)[0])
		return file, line
	}
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
	return fs
}

// programFinding warns when a hook's program is not where its command says; it names the last candidate (the plugin's own).
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

// earlierLauncher warns of an older launcher, which let a stop pass when the program could not run.
func earlierLauncher(command, loc, initCmd string) []finding {
	if !settings.Earlier(command) {
		return nil
	}
	undo := strings.Replace(initCmd, "gate init", "gate uninstall", 1)
	if strings.Contains(initCmd, "--plugin") {
		undo = "deleting the plugin's hooks/hooks.json"
	}
	return warn(loc, "registered by an earlier gate init, whose launcher lets a stop pass when the hook program is there but cannot run (built for another platform, a noexec mount)",
		"re-register: "+undo+", then "+initCmd+" (with the options it was given)")
}

// onFailureFinding warns of a Claude Code guard hook without onFailure "block".
func onFailureFinding(c *client.Client, fd settings.Found, loc, initCmd string) []finding {
	if c != client.Claude || settings.Program(fd.Command) != hook.Detect || !guards(fd.Event) || fd.OnFailure == "block" {
		return nil
	}
	return warn(loc, fd.Hook.String()+` has no "onFailure": "block": if the guard cannot start or times out, the call it guards goes ahead`,
		`add "onFailure": "block" to it, or re-register: `+strings.Replace(initCmd, "gate init", "gate uninstall", 1)+", then "+initCmd)
}

// timeoutFinding fails a gate hook told a longer timeout than the client enforces, or one a validator outlasts (stop.DeadlineFrom).
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
		return fail(loc, fmt.Sprintf("%s %s, but the client kills it at %s: a stop still being judged then passes unanswered", fd.Hook.String(), how, enforced),
			"give the hook's command --timeout with the hook's timeout in seconds (gate init writes 600 for both)")
	}
	if cfg == nil {
		return nil
	}
	var longest *config.Validator
	for _, name := range cfg.Order {
		if v := cfg.Validators[name]; (v.Run != "" || v.Judge != nil) && (longest == nil || v.Timeout > longest.Timeout) {
			longest = v
		}
	}
	if longest == nil || longest.Timeout <= told-stop.Margin(told) {
		return nil
	}
	return fail(loc, fmt.Sprintf("%s has a timeout of %s, but validator %q may run for %s: the gate answers %s before the hook's timeout, and kills it then (it fails as timed out)",
		fd.Hook.String(), told, longest.Name, longest.Timeout, stop.Margin(told)),
		fmt.Sprintf("raise the hook's timeout and --timeout above %s, or lower the validator's timeout", longest.Timeout+stop.Margin(told)))
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

// hooksEnv are the clients that hand the hooks an env, and whether the top-level env counts too.
var hooksEnv = map[string]bool{client.Gemini.Name: false, client.Qwen.Name: true}

// clientEnvFindings judges the env c's hook files and .env files hand the hooks.
func clientEnvFindings(ws workspace, home string, c *client.Client) []finding {
	top, ok := hooksEnv[c.Name]
	if !ok {
		return nil
	}
	var out []finding
	for _, at := range [][2]string{{c.HookFile, ws.root}, {"~/" + c.HookFile, home}} { // the project's, the user's
		data, err := os.ReadFile(filepath.Join(at[1], c.HookFile))
		if err != nil || at[1] == "" {
			continue
		}
		d := settings.Parse(data)
		names := d.HookEnv()
		if top {
			names = append(names, d.Env()...)
		}
		out = append(out, envFindings(at[0], names)...)
	}
	for _, f := range trust.DotEnvHookEnv(c.Name, ws.root, home) {
		out = append(out, fail(f.Show, f.What()+", which "+c.Title+" loads into its environment and hands every hook and validator: it chooses the programs they run",
			"remove it from the file, and set it in the shell that starts the client")...)
	}
	return out
}

// envFindings are the trusted base's variables (trust.HookEnv) an env at loc sets.
func envFindings(loc string, names []string) []finding {
	env := trust.HookEnv(names)
	if len(env) == 0 {
		return nil
	}
	return fail(loc, "env sets "+strings.Join(env, ", ")+", which every hook and validator runs with: it chooses the programs they run",
		"remove it from env, and set it in the shell that starts the client")
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
		return c.HookFile != "" && exists(filepath.Join(root, filepath.FromSlash(c.HookFile)))
	}
	if name != "" {
		c, err := clientNamed(name)
		if err != nil || c == client.Claude {
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

// replaceLine is go.mod's first replace directive.
var replaceLine = regexp.MustCompile(`(?m)^[ \t]*replace(\s|$)`)

// goToolFindings warns, where go.mod pins stopgate as a tool, of what makes go tool build another.
func goToolFindings(ws workspace) []finding {
	if !goTool(ws.root) {
		return nil
	}
	var locs []string
	data, _ := os.ReadFile(filepath.Join(ws.root, "go.mod"))
	if at := replaceLine.FindIndex(data); at != nil {
		locs = append(locs, "go.mod:"+strconv.Itoa(bytes.Count(data[:at[0]], []byte("\n"))+1))
	}
	for _, name := range []string{"go.work", "vendor/modules.txt"} {
		if exists(filepath.Join(ws.root, name)) {
			locs = append(locs, name)
		}
	}
	return mapped(locs, func(loc string) finding {
		// GOWORK=off: in a workspace, go list -m names no version.
		return finding{loc, true, "if this replaces, vendors or puts in a workspace stopgate or a module it uses, the stopgate plugin does not run the go tool it builds, so with no bin/ every stop halts",
			"install stopgate as published in bin/, which the hooks run first: " + goInstall(`"$PWD"/bin`, "@$(GOWORK=off go list -m -f '{{.Version}}' "+goModule+")")}
	})
}

// registeredFindings fails each hook program outside the wall: the agent could replace it unseen.
func registeredFindings(ws workspace, set *guard.Set, regs []guard.Registered) []finding {
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
		out = append(out, fail(r.File, fmt.Sprintf("`%s` runs %s: the agent could replace it unseen", cli.Clip(r.Command, 80, "…"), what),
			"register the hooks by an absolute path or one under the project: gate init --bin DIR")...)
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
		return line, warn(ws.rel(ws.file), "telemetry is on, but "+err.Error(), "stops are judged and logged as ever; nothing is exported until it is installed")
	}
	return line, nil
}

// configChangeInput returns data's ConfigChange; ok with an error (one that cannot be read) is refused, never judged as a stop.
func configChangeInput(data []byte) (in *hook.Input, ok bool, err error) {
	if !bytes.Contains(data, []byte(`"ConfigChange"`)) {
		return nil, false, nil
	}
	in, err = hook.Parse(data, hook.ConfigChange)
	if err == nil {
		return in, true, nil
	}
	var ev struct {
		Event string `json:"hook_event_name"`
	}
	if json.Unmarshal(data, &ev) == nil && ev.Event != hook.ConfigChange {
		return nil, false, nil // another event that mentions it: the stop reads it
	}
	return nil, true, err
}

// unreadableChange refuses an unreadable ConfigChange in a stopgate project, else returns err.
func unreadableChange(env *cli.Env, err error) error {
	root := project.Root(env.Getenv, "", env.Dir)
	if !stopgateProject(env, root, config.Path(root, "", env.Dir), settingsFiles(env, root)) {
		return err
	}
	return hook.AnswerTo(env.Stdout, nil).Write(hook.Block("stopgate refused this settings change: its ConfigChange input could not be read (" +
		err.Error() + "), so whether it weakens stopgate's hooks or its wall cannot be told; this session keeps the settings it had."))
}

// configChange blocks a settings change that weakens a hook, a switch or the wall (docs/security.md, ConfigChange).
func configChange(env *cli.Env, in *hook.Input) error {
	if in.Source == "skills" || in.Source == "policy_settings" {
		return nil
	}
	root, home := project.Root(env.Getenv, in.Cwd, env.Dir), env.Getenv("HOME")
	ws := workspace{root: root, file: config.Path(root, "", env.Dir)}
	claude := settingsFiles(env, root)
	cfg, _, err := config.Inspect(ws.file, ws.root, config.FileOnly)
	if errors.Is(err, fs.ErrNotExist) && !stopgateProject(env, root, ws.file, claude) {
		return nil
	}
	// A plugin's hooks are registered in CLAUDE_PLUGIN_ROOT, not the settings.
	why := errorsOf(claudeHookFindings(env, ws, cfg, env.Getenv("CLAUDE_PLUGIN_ROOT"), claude), false)
	why = append(why, errorsOf(switchFindings(claude), true)...)
	if set := wallOf(trust.Project{Root: root, Home: home, File: ws.file, Config: cfg, Regs: claude.registrations(root, home)}); !set.Empty() {
		rules := denyRules(set, root, home)
		w, bad := readWalls(claude.texts)
		switch {
		case bad != nil:
			why = append(why, bad.loc+": "+bad.msg)
		case !w.Present(rules) && exists(filepath.Join(ws.stateDir(), noWallMark)): // no wall to weaken
		default:
			why = append(why, errorsOf(wallDown(claude, w, rules), true)...)
		}
	}
	if len(why) == 0 {
		return nil
	}
	return hook.AnswerTo(env.Stdout, in).Write(hook.Block("stopgate refused this change to " + cmp.Or(in.ChangedFile, in.Source) +
		": it removes or weakens stopgate's hooks or its wall, so this session keeps the settings it had. " +
		strings.Join(why, "; ") + ". If the change is wanted, the user makes it and starts a new session (gate check says what is missing)."))
}

// errorsOf are fs as "loc: msg", the warnings too when warnings.
func errorsOf(fs []finding, warnings bool) []string {
	return each(fs, func(f finding) string {
		if f.warning && !warnings {
			return ""
		}
		return f.loc + ": " + f.msg
	})
}

// stopgateProject reports whether root shows stopgate: config, state dir, plugin or a registration.
func stopgateProject(env *cli.Env, root, file string, claude *claudeSettings) bool {
	for _, p := range []string{file, filepath.Join(root, config.DefaultStateDir)} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			return true
		}
	}
	if env.Getenv("CLAUDE_PLUGIN_ROOT") != "" {
		return true
	}
	for _, src := range claude.texts {
		if errors.Is(src.err, fs.ErrNotExist) {
			continue
		}
		if src.err != nil {
			return true
		}
		found, err := src.doc.Lookup(expected())
		if err != nil && bytes.Contains(src.data, []byte(hook.Gate)) || slices.ContainsFunc(found, func(f settings.Found) bool { return f.Registered }) {
			return true
		}
	}
	return false
}

// switchFindings are settings keys that switch the hooks off or choose what they run (trust.HookEnv).
func switchFindings(claude *claudeSettings) []finding {
	var out []finding
	for _, src := range claude.sharedFirst() {
		if src.err != nil {
			continue // hookFindings reports it
		}
		if src.doc.DisablesHooks() {
			out = append(out, fail(src.Name, "disableAllHooks is true", "no hook runs, stopgate's included: remove it")...)
		}
		out = append(out, envFindings(src.Name, src.doc.Env())...)
	}
	return out
}

// claudeSettings are Claude Code's settings files in its order (guard.ClaudeSettings), read once; init writes texts[at].
type claudeSettings struct {
	texts []settingsText
	at    int
}

// settingsFiles reads the user's and the project's Claude Code settings.
func settingsFiles(env *cli.Env, root string) *claudeSettings {
	files := guard.ClaudeSettings(root, env.Getenv("HOME"))
	at := slices.IndexFunc(files, func(s guard.SettingsFile) bool { return s.Name == settingsFile })
	return &claudeSettings{readSettings(files), at}
}

func (c *claudeSettings) shared() guard.SettingsFile { return c.texts[c.at].SettingsFile }

// sharedFirst are the texts, the shared ones first.
func (c *claudeSettings) sharedFirst() []settingsText {
	return append([]settingsText{c.texts[c.at]}, slices.Delete(slices.Clone(c.texts), c.at, c.at+1)...)
}

// registrations are the stopgate programs the hook files register, these settings as read here.
func (c *claudeSettings) registrations(root, home string) []guard.Registered {
	read := map[string][]byte{}
	for _, s := range c.texts {
		read[s.Path] = s.data // nil for one that could not be read: it registers none
	}
	return guard.Registrations(root, home, read)
}

// settingsText is a settings file read and parsed once.
type settingsText struct {
	guard.SettingsFile
	data []byte        // nil when it could not be read
	err  error         // reading it (fs.ErrNotExist: it is not there)
	doc  *settings.Doc // nil when it could not be read
}

// maxSettings bounds a settings file's read, far above any real one.
const maxSettings = 16 << 20

// readSettings reads through regular.ReadFile: a planted named pipe cannot hold the hook.
func readSettings(files []guard.SettingsFile) []settingsText {
	return mapped(files, func(f guard.SettingsFile) settingsText {
		t := settingsText{SettingsFile: f}
		if t.data, t.err = regular.ReadFile(f.Path, maxSettings); t.err == nil {
			t.doc = settings.Parse(t.data)
		}
		return t
	})
}

// wallOf is the trusted base's wall (trust.For), whence the OS wall's rules and every client's wall (docs/security.md).
func wallOf(p trust.Project) *guard.Set {
	base, _ := trust.For(p)
	return base.Wall()
}

// projectSet is the wall of the project at root, with hook programs about to be registered.
func projectSet(env *cli.Env, root string, bins []string, registered ...string) *guard.Set {
	file := filepath.Join(root, project.ConfigName)
	cfg, _, _ := config.Inspect(file, root, config.FileOnly)
	return wallOf(trust.Project{Root: root, Home: env.Getenv("HOME"), File: file, Config: cfg, Bins: bins, Registered: registered})
}

// denyRules returns the Edit deny rules for set (a folder's covers its contents).
func denyRules(set *guard.Set, root, home string) []string {
	if home != "" {
		home = filepath.Clean(home) // $HOME as set, maybe with a trailing slash
	}
	var out []string
	for _, p := range set.Paths() {
		for _, path := range walled(p.Path) {
			st, err := os.Stat(filepath.FromSlash(path))
			dir := (err == nil && st.IsDir()) || p.Dir
			out = append(out, settings.DenyRule(filepath.ToSlash(root), filepath.ToSlash(home), path, dir))
		}
	}
	return out
}

// walled is a protected glob's matches here: Claude Code's sandbox applies no glob's deny rule to Bash (2.1.332).
func walled(path string) []string {
	if !strings.ContainsAny(path, "*?[") {
		return []string{path}
	}
	matches, _ := filepath.Glob(filepath.FromSlash(path)) // a bad pattern matches nothing
	for i, m := range matches {
		matches[i] = filepath.ToSlash(m)
	}
	return matches
}

// writeWall merges the OS wall alone into the project's settings.
func writeWall(env *cli.Env, root string, bins []string) error {
	files, wall := settingsFiles(env, root), wallFor(env, root, bins, nil)
	if err := edit(files.shared(), nil, wall.merge); err != nil {
		return err
	}
	wall.say(env, files)
	return nil
}

// wallMerge is the OS wall merged into the project's settings.
type wallMerge struct {
	off   bool // [settings] protect = []: nothing to wall in
	rules []string
	added []string // the settings it added
	st    settings.Walls
}

// wallFor is the OS wall of the project at root, with hook programs about to be registered, to merge.
func wallFor(env *cli.Env, root string, bins, registered []string) *wallMerge {
	set := projectSet(env, root, bins, registered...)
	return &wallMerge{off: set.Empty(), rules: denyRules(set, root, env.Getenv("HOME"))}
}

// merge merges the sandbox settings and the deny rules into data, the project's settings.
func (w *wallMerge) merge(data []byte) (out []byte, err error) {
	if w.off {
		return data, nil
	}
	if out, w.added, w.st, err = settings.MergeWall(data, w.rules); err != nil {
		return nil, settingsError(settingsFile, err)
	}
	return out, nil
}

// say tells what the wall added, what settings keep against it, and what the machine lacks.
func (w wallMerge) say(env *cli.Env, files *claudeSettings) {
	name := settingsFile
	if w.off {
		fmt.Fprintf(env.Stdout, "%s: no OS wall: [settings] protect = [] protects nothing\n", name)
		return
	}
	if len(w.added) == 0 {
		fmt.Fprintf(env.Stdout, "%s: the OS wall is already there (sandbox, %s)\n", name, cli.Plural(len(w.rules), "deny rule", "deny rules"))
	} else {
		fmt.Fprintf(env.Stdout, "%s: the OS wall: added %s\n", name, cli.Plural(len(w.added), "setting", "settings"))
		for _, a := range w.added {
			fmt.Fprintf(env.Stdout, "  + %s\n", a)
		}
	}
	for _, a := range w.st.Against() { // sandbox keys set against the wall
		fmt.Fprintf(env.Stdout, "note: %s: %s; left as it is\n", name, a.Text)
	}
	for _, f := range files.texts[files.at+1:] { // the local ones, whose keys win
		other, _ := settings.Parse(f.data).Wall() // one that cannot be read sets nothing
		for _, a := range other.Against() {
			fmt.Fprintf(env.Stdout, "note: %s: %s; it overrides %s\n", f.Name, a.Text, name)
		}
	}
	if missing := missingTools(env); len(missing) > 0 {
		fmt.Fprintf(env.Stdout, "note: the OS sandbox needs %s, not installed here: until it is, the client refuses every Bash command (apt-get install %s)\n",
			strings.Join(missing, " and "), strings.Join(packages(missing), " "))
	}
}

// missingTools returns what the client's sandbox needs and PATH lacks (Linux: bwrap, socat).
func missingTools(env *cli.Env) []string {
	if runtime.GOOS != "linux" {
		return nil
	}
	var out []string
	for _, t := range []string{"bwrap", "socat"} {
		onPath := slices.ContainsFunc(filepath.SplitList(env.Getenv("PATH")), func(dir string) bool {
			return executable(filepath.Join(dir, t))
		})
		if !onPath {
			out = append(out, t)
		}
	}
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func executable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

func packages(tools []string) []string {
	return each(tools, func(t string) string { return cmp.Or(map[string]string{"bwrap": "bubblewrap"}[t], t) })
}

// wallFindings says whether the OS wall of set is up and why not; summary says it in a few words.
func wallFindings(env *cli.Env, ws workspace, cfg *config.Config, claude *claudeSettings, set *guard.Set) (out []finding, summary string) {
	confined, out := confineFindings(ws, cfg)
	summary = "the OS wall is up" + confined
	if set.Empty() {
		summary = "nothing protected (protect = [])" + confined
	}
	w, bad := readWalls(claude.texts)
	if bad != nil {
		return append(out, *bad), summary
	}
	if w.Read == 0 || set.Empty() {
		return out, summary // no settings: hookFindings says so; protect = []: nothing to wall in
	}
	out = append(out, wallDown(claude, w, denyRules(set, ws.root, env.Getenv("HOME")))...)
	if m := missingTools(env); w.Value("enabled") && len(m) > 0 {
		out = append(out, warn(settingsFile, "the OS sandbox needs "+strings.Join(m, " and ")+", not installed here: the client refuses every Bash command until it is",
			"apt-get install "+strings.Join(packages(m), " ")+" (as root; scripts/install-sandbox-tools does it)")...)
	}
	return out, summary
}

// readWalls reads the wall from the files; one of valid JSON shaped wrong is a finding.
func readWalls(files []settingsText) (settings.Walls, *finding) {
	docs := mapped(files, func(f settingsText) *settings.Doc { return f.doc })
	w, bad, err := settings.ReadWalls(docs)
	if err == nil || !docs[bad].JSON() {
		return w, nil
	}
	f := errorFinding(files[bad].Name, err) // valid JSON: a *settings.Error
	f.warning, f.msg, f.hint = true, f.msg+": the OS wall is down", "fix it by hand, then run gate init again"
	return w, &f
}

// errorFinding is err reading the file name, at its line and column when it has them.
func errorFinding(name string, err error) finding {
	if se, ok := errors.AsType[*settings.Error](err); ok {
		return finding{loc: fmt.Sprintf("%s:%d:%d", name, se.Line, se.Column), msg: se.Msg}
	}
	return finding{loc: name, msg: err.Error()}
}

// wallDown reports what takes the wall down: keys against it or unset, rules missing, exclusions.
func wallDown(files *claudeSettings, w settings.Walls, rules []string) []finding {
	var out []finding
	for _, a := range w.Against() {
		out = append(out, warn(fmt.Sprintf("%s:%d", files.texts[a.File].Name, a.Line), a.Text+": the OS wall is down",
			"set it as gate init writes it, or keep it knowing the guard alone stands")...)
	}
	if unset := w.Unset(); len(unset) > 0 {
		out = append(out, warn(settingsFile, "the OS wall is down: "+strings.Join(unset, ", ")+" not set, so the agent's Bash can write the protected set in ways the guard cannot see",
			`"gate init" writes the sandbox settings and keeps the rest of the file`)...)
	}
	if missing := w.Lacking(rules); len(missing) > 0 {
		out = append(out, warn(settingsFile, "permissions.deny lacks "+strings.Join(missing, ", ")+": the sandbox and the Write/Edit tools let the agent change it",
			`"gate init" adds the deny rules of the protected set (run it again after adding a run validator)`)...)
	}
	if len(w.Excluded) > 0 {
		out = append(out, warn(settingsFile, "sandbox.excludedCommands run outside the OS sandbox: "+strings.Join(w.Excluded, ", "),
			"keep it empty: an excluded command can write the protected set")...)
	}
	return out
}

// confineFindings says whether run validators are confined, and when they cannot be (with confine = true, an error).
func confineFindings(ws workspace, cfg *config.Config) (summary string, out []finding) {
	if cfg == nil {
		return "", nil
	}
	if runs, err := cfg.Runs(); err == nil && len(runs) == 0 { // an unreadable one may run
		return "", nil
	}
	if cfg.Settings.Confine == config.ConfineOff {
		return "; run validators unconfined (confine = false)", nil
	}
	_, err := validator.Bwrap()
	switch {
	case err == nil:
	case cfg.Settings.Confine == config.ConfineOn:
		out = fail(ws.rel(ws.file), "settings.confine: run validators cannot be confined: "+err.Error()+"; every stop that runs one halts",
			"install bubblewrap (scripts/install-sandbox-tools), or set confine = false")
	default:
		out = warn(ws.rel(ws.file), "run validators are not confined: "+err.Error()+"; code they run (the agent's tests) can rewrite the protected set",
			"install bubblewrap (scripts/install-sandbox-tools), or set confine = false to say they run unconfined")
	}
	return "; run validators confined", out
}

// initClientWall puts up the client's own wall (client.Wall), if any.
func initClientWall(env *cli.Env, c *client.Client, root string) error {
	if c.Wall == nil {
		return nil
	}
	set := projectSet(env, root, nil)
	if set.Empty() {
		fmt.Fprintf(env.Stdout, "%s: no wall: [settings] protect = [] protects nothing\n", c.Title)
		return nil
	}
	return c.Wall.Up(env.Stdout, root, wallPaths(set))
}

// clientWallFindings says whether the client's own wall over set is up.
func clientWallFindings(env *cli.Env, ws workspace, c *client.Client, set *guard.Set) []finding {
	if c.Wall == nil || set.Empty() {
		return nil
	}
	return mapped(c.Wall.Check(env.Getenv, ws.root, wallPaths(set)), func(f client.Finding) finding { return finding{f.Loc, f.Warning, f.Msg, f.Hint} })
}

func wallPaths(set *guard.Set) []client.Path {
	return mapped(set.Paths(), func(p guard.Protected) client.Path { return client.Path{Path: p.Path, Show: p.Show, Dir: p.Dir} })
}
