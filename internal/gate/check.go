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
)

// finding is one line of `gate check`: where, what, and how to fix it.
type finding struct {
	loc     string // "file", "file:line" or "file:line:column"
	warning bool
	msg     string
	hint    string
}

// String is the finding as check prints it. Its text comes from files the
// agent can write (a key, a path, a command): control characters are
// spelled out (cli.Visible), so that none reaches the terminal.
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

// runCheck is `gate check`: mappings.toml as the gate loads it (config.Inspect,
// the gate's own entry point), the files it names, and the hook
// registrations. Every finding is one line and a hint; exit 1 when any is
// an error, 0 when there are only warnings.
func runCheck(env *cli.Env, args []string) error {
	fl := flags("check")
	configFile := configFlag(fl)
	plugin := fl.String("plugin", "", "check the hooks of the plugin in `DIR` instead of .claude/settings.json")
	clientName := clientFlag(fl, "check the hooks of the agent `CLIENT` only")
	if err := parseFlags(env, fl, args); err != nil {
		return err
	}
	ws := workspaceOf(env, *configFile)
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

// configFindings are mappings.toml's findings, as config.Inspect loads it.
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
		fs = append(fs, problemFinding(p))
	}
	return cfg, fs, nil
}

// hookCheck returns the findings of the hook registrations of the clients
// checked, and the summary of Claude Code's OS wall ("": not checked).
func hookCheck(env *cli.Env, ws workspace, cfg *config.Config, plugin, clientName string, clients []*client.Client) ([]finding, string) {
	var fs []finding
	// Each settings file is read once; so are the hook files behind regs.
	// Claude Code's are read only where it may be checked.
	claude, home := settingsFiles(env, ws.root).load(), env.Getenv("HOME")
	var regs []guard.Registered
	if clientName == "" || clientName == "claude" || runsClaude(clientName) {
		regs = claude.registrations(ws.root, home)
	} else {
		regs = guard.Registrations(ws.root, home, nil)
	}
	if plugin == "" && (clientName == "" || clientName == "claude") && !claudeRegistered(regs) {
		plugin = installedPlugin(home, claude.paths()) // the marketplace's plugin registers them
	}
	// With no --client, Claude Code is checked when the project registers
	// it, or when it registers no other client (to say nothing is).
	summary := "" // the OS wall is Claude Code's sandbox: checked with its hooks
	if clientName == "claude" || clientName == "" && (plugin != "" || len(clients) == 0 || claudeRegistered(regs)) || runsClaude(clientName) {
		fs = append(fs, hookFindings(env, ws, cfg, plugin, claude)...)
		fs = append(fs, switchFindings(claude)...)
		var wall []finding
		wall, summary = wallFindings(env, ws, cfg, claude, regs)
		fs = append(fs, wall...)
	}
	for _, c := range clients {
		fs = append(fs, clientFindings(env, ws, cfg, c)...) // clientcheck.go
	}
	return append(fs, registeredFindings(env, ws, cfg, regs)...), summary
}

// runsClaude reports whether the client of name has no hook file of its
// own and runs Claude Code's registration (VS Code agent mode): checking
// it checks that registration.
func runsClaude(name string) bool {
	c := client.Named(name)
	return c != nil && c.HookFile == "" && slices.Contains(c.Runs, client.Claude)
}

// checkReport prints the findings, the clients' notes and the summary
// line; exit 1 when a finding is an error.
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
		for _, l := range c.Limits { // what the client lacks that a stopgate feature needs
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

func problemFinding(p *config.Problem) finding {
	loc := p.File
	if p.Line > 0 {
		loc += fmt.Sprintf(":%d", p.Line)
	}
	msg := p.Msg
	if p.Key != "" {
		msg = p.Key + ": " + msg
	}
	return finding{loc: loc, warning: p.Warning, msg: msg, hint: p.Hint}
}

// hookFindings checks that every stopgate hook is registered, in the
// project's settings (shared or local) or the user's, or in the plugin;
// that each registered program exists; and that the gate's hook timeout
// exceeds every validator's.
func hookFindings(env *cli.Env, ws workspace, cfg *config.Config, plugin string, claude *claudeTexts) []finding {
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
					uncovered[i] = fd.Uncovered // registered for some of its tools
				}
				continue
			}
			registered[i] = true
			loc := fmt.Sprintf("%s:%d", src.Name, fd.Line)
			out = append(out, programFinding(env, fd.Command, loc, base, vars)...)
			out = append(out, earlierLauncher(fd.Command, loc, initCmd)...)
			out = append(out, timeoutFinding(cfg, fd, loc, client.Claude.Name)...)
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

// unregistered is the finding of a hook h not registered in the file at
// loc: an error, except for the test runner's hooks, which gate init
// --no-testhook leaves out on purpose: a warning says what is then off.
func unregistered(loc string, h settings.Hook, msg, initCmd string) finding {
	f := finding{loc: loc, msg: msg, hint: initCmd + " registers every stopgate hook and keeps the rest of the file"}
	if settings.Program(h.Command) == hook.Testhook {
		f.warning = true
		f.msg += ": the test runner's words and its --auto mode are off (as gate init --no-testhook leaves them)"
	}
	return f
}

// fileError is the finding of a hook file that does not parse, or is not
// shaped as the client expects, at the line and column it names.
func fileError(name, client string, err error) finding {
	f := finding{loc: name, msg: err.Error(), hint: client + " cannot read this file either: fix it by hand"}
	var se *settings.Error
	if errors.As(err, &se) {
		f.loc, f.msg = fmt.Sprintf("%s:%d:%d", name, se.Line, se.Column), se.Msg
	}
	return f
}

// sortByLocation orders findings by file, the files in the order they were
// checked (first seen), then by line: a strict weak ordering, which the
// sort needs (comparing files as "neither before the other" was not one).
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

// programFinding warns when a registered hook's program is not where its
// command says: the client would fail it on every event. vars are the
// variables the client sets for a hook; any other is read from the
// environment. The program is shown relative to base.
//
// A launcher (settings.Launcher) runs the first of its candidates that is
// executable, globs expanded, and halts the stop where none is: the
// finding then says what the stop will say.
func programFinding(env *cli.Env, command, loc, base string, vars map[string]string) []finding {
	var first string
	for i, p := range settings.Paths(command) {
		path := os.Expand(p, func(v string) string {
			if s, ok := vars[v]; ok {
				return s
			}
			return env.Getenv(v)
		})
		if !filepath.IsAbs(path) {
			return nil // on $PATH, or relative to where the client runs: not ours to judge
		}
		if i == 0 {
			first = path
		}
		matches, _ := filepath.Glob(path)
		if slices.ContainsFunc(matches, executable) {
			return nil
		}
	}
	in := binInstall(base, filepath.Dir(first))
	if strings.Contains(first, "*") { // npm's platform package, as the shell finds it (install.go)
		in = npmProject("")
	}
	msg := fmt.Sprintf("hook program %s is missing or not executable", project.Display(base, first))
	if _, ok := settings.Candidates(command); ok {
		msg += ": until it is installed, its launcher answers for it (a stop halts, a guarded tool call is refused)"
	}
	return []finding{{loc: loc, warning: true, msg: msg, hint: "install it (" + in.method + "): " + in.command}}
}

// earlierLauncher warns of a launcher an earlier gate init registered: it
// ran the program with exec, so a program there that cannot run (built for
// another platform, a noexec mount) ended the hook in the shell's 126 or
// 127, and the stop passed. gate init keeps a registered hook as it is, so
// the fix is to take it out first.
func earlierLauncher(command, loc, initCmd string) []finding {
	if !settings.Earlier(command) {
		return nil
	}
	undo := strings.Replace(initCmd, "gate init", "gate uninstall", 1)
	if strings.Contains(initCmd, "--plugin") {
		undo = "deleting the plugin's hooks/hooks.json"
	}
	return []finding{{loc: loc, warning: true,
		msg:  "registered by an earlier gate init, whose launcher lets a stop pass when the hook program is there but cannot run (built for another platform, a noexec mount)",
		hint: "re-register: " + undo + ", then " + initCmd + " (with the options it was given)"}}
}

// onFailureFinding warns of a guard hook registered without onFailure
// "block" (an earlier gate init's): a guard that cannot start or times out
// then lets the call it guards through.
func onFailureFinding(fd settings.Found, loc, initCmd string) []finding {
	if settings.Program(fd.Command) != hook.Detect || !guards(fd.Event) || fd.OnFailure == "block" {
		return nil
	}
	undo := strings.Replace(initCmd, "gate init", "gate uninstall", 1)
	return []finding{{loc: loc, warning: true,
		msg:  fd.Hook.String() + ` has no "onFailure": "block": if the guard cannot start or times out, the call it guards goes ahead`,
		hint: `add "onFailure": "block" to it, or re-register: ` + undo + ", then " + initCmd}}
}

// timeoutFinding checks the gate hook's timeouts: the gate answers before
// the timeout it is told (--timeout, else the client's default; package
// stop, deadline.go), so that must not exceed the one the client enforces
// (fd.Timeout in seconds, else the same default), and a run validator
// whose timeout outlasts what is left before the deadline would be killed
// and fail as timed out at every stop that runs it long enough. Both are
// errors: the first lets the client kill the gate (the stop passes
// unanswered), the second fails a check that was never wrong.
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
		// File checks take no time; only programs and judges can run into the limit.
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

// flagTimeout is the --timeout a hook command gives the gate, 0 for none.
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

// dedupe drops repeated findings: one missing program is reported once,
// not once per event that runs it.
func dedupe(fs []finding) []finding {
	seen := map[string]bool{}
	var out []finding
	for _, f := range fs {
		if !seen[f.msg] {
			seen[f.msg] = true
			out = append(out, f)
		}
	}
	return out
}
