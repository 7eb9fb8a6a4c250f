// Package gate is the gate command: with a subcommand, the CLI a person
// runs; with none, the Stop / SubagentStop hook (package stop) and Claude
// Code's ConfigChange hook (check.go).
package gate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/stop"
	"github.com/stopgate/stopgate/internal/validator"
)

// command is one of gate's subcommands. Exit codes: 0 done; 1 findings or
// a failure, one line on stderr; 2 a usage mistake.
type command struct {
	name, args, summary string
	run                 func(env *cli.Env, args []string) error
}

func commands() []command {
	return []command{
		{"init", "[--plugin DIR] [--bin DIR] [--client CLIENT] [--no-wall] [--no-testhook]", "register the stopgate hooks in .claude/settings.json (or write a plugin, or in another client's own file), a starter mappings.toml and the state dir in .gitignore", runInit},
		{"uninstall", "[--bin DIR] [--client NAME]", "take out what gate init added (hooks, the OS wall, the .gitignore line; a client's own files with --client), where it is still as init wrote it", runUninstall},
		{"check", "[--config FILE] [--plugin DIR] [--client CLIENT]", "check mappings.toml and the project against it; exit 1 on any error", runCheck},
		{"status", "[--config FILE] [--json]", "pending entries per session and scope, blocked stops, set-aside entries", runStatus},
		{"run", "[--config FILE] [--json] (PROMPT... | --all)", "run prompts' validators now, as the gate would", runRun},
		{"explain", "[--config FILE] PATH|/command|KEY", "which mappings a read of PATH or a slash command arms, and why; every name of a KEY", runExplain},
		{"log", "[--config FILE] [--since D] [--json | --export [--timeout D]]", "the gate's decisions, from the outcome log; --export sends them over OTLP", runLog},
		{"stats", "[--config FILE] [--since D] [--json]", "pass rates, blocks per session, attempts until pass, slowest validators", runStats},
		{"report", "[--config FILE] [--since D] [--out FILE]", "write the outcome log as one self-contained HTML page: verdicts over time, failing prompts and validators, halts, clients", runReport},
		{"clear", "[--config FILE] SESSION", "drop a session's armed prompts, a person's decision the outcome log records", runClear},
		{"verdict", "[--config FILE] SESSION", "exit 0 only when the session (as the client reports it) ended judged and passing; else say why", runVerdict},
		{"version", "", "the stopgate version and the commit it was built from (also --version)", runVersion},
		{"help", "", "this list (also -h, --help)", func(env *cli.Env, _ []string) error {
			Usage(env.Stdout)
			return nil
		}},
	}
}

func subcommand(name string) *command {
	cs := commands()
	if i := slices.IndexFunc(cs, func(c command) bool { return c.name == name }); i >= 0 {
		return &cs[i]
	}
	return nil
}

func runVersion(env *cli.Env, args []string) error {
	if err := parseFlags(env, flags("version"), args); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, cli.Version("gate"))
	return nil
}

// Usage prints gate's commands, for help, -h and --help.
func Usage(w io.Writer) {
	fmt.Fprintln(w, "usage: gate                 the Stop / SubagentStop hook: one hook input object on stdin")
	fmt.Fprintln(w, "       gate COMMAND [flags]")
	fmt.Fprintln(w)
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
		if c.args != "" {
			fmt.Fprintf(w, "  %-8s   gate %s %s\n", "", c.name, c.args)
		}
	}
}

// usageError exits 2 with err, its own hints, and the usage.
func usageError(name string, err error) error {
	hints := []string{usageLine(name)}
	if h, ok := errors.AsType[*cli.Hinted](err); ok {
		err, hints = h.Err, append(h.Hints, hints...)
	}
	return &cli.ExitError{Code: 2, Err: cli.WithHint(err, hints...)}
}

func usageLine(name string) string {
	if c := subcommand(name); c != nil {
		return "usage: gate " + c.name + " " + c.args
	}
	return `run "gate help" for the commands`
}

// flags is a subcommand's flag set: errors are returned, never printed.
func flags(name string) *flag.FlagSet {
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	return fl
}

// The flags several commands take, declared once.
func jsonFlag(fl *flag.FlagSet) *bool { return fl.Bool("json", false, "print JSON") }
func configFlag(fl *flag.FlagSet) *string {
	return fl.String("config", "", "the mappings `FILE` (default <root>/mappings.toml)")
}
func clientFlag(fl *flag.FlagSet, does string) *string {
	return fl.String("client", "", does+" ("+strings.Join(client.Names, ", ")+")")
}

// parseFlags parses args for a command that takes flags only.
func parseFlags(env *cli.Env, fl *flag.FlagSet, args []string) error {
	_, err := parseAtMost(env, fl, args, 0)
	return err
}

// parseAtMost parses args, flags after arguments too (cli.Parse), refusing more than
// most arguments (-1: any); -h prints the usage and ends with exit 0 (errHelp).
func parseAtMost(env *cli.Env, fl *flag.FlagSet, args []string, most int) ([]string, error) {
	rest, err := cli.Parse(fl, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(env.Stdout, usageLine(fl.Name()))
		fl.SetOutput(env.Stdout)
		fl.PrintDefaults()
		return nil, errHelp
	case err != nil:
		return nil, usageError(fl.Name(), err)
	case most >= 0 && len(rest) > most:
		return rest, usageError(fl.Name(), fmt.Errorf("unexpected argument %q", rest[most]))
	}
	return rest, nil
}

// parseVerb parses args with --config (parseAtMost), returning the workspace it names and the arguments.
func parseVerb(env *cli.Env, fl *flag.FlagSet, args []string, most int) (workspace, []string, error) {
	configFile := configFlag(fl)
	rest, err := parseAtMost(env, fl, args, most)
	root := project.Find(env.Getenv, env.Dir)
	return workspace{root: root, file: config.Path(root, *configFile, env.Dir)}, rest, err
}

// printJSON prints v as indented JSON, for a command's --json.
func printJSON(env *cli.Env, v any) error {
	enc := json.NewEncoder(env.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// errHelp ends a command that printed its usage on request.
var errHelp = &cli.ExitError{Code: 0}

// workspace is what a subcommand works on: the root and mappings.toml.
type workspace struct{ root, file string }

// load loads the config whole: a mistake in it fails the command.
func (w workspace) load() (*config.Config, error) {
	cfg, ps, err := config.Inspect(w.file, w.root, config.FileOnly)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, cli.WithHint(fmt.Errorf("no %s in %s", project.ConfigName, w.root), `"gate init" writes a starter one`)
		}
		return nil, err
	}
	if errs := ps.Errors(); len(errs) > 0 {
		more := ""
		if len(errs) > 1 {
			more = fmt.Sprintf(" (and %d more)", len(errs)-1)
		}
		return nil, cli.WithHint(fmt.Errorf("%s%s", errs[0].Error(), more), `"gate check" lists every problem with a hint`)
	}
	return cfg, nil
}

// stateDir is the state dir the config names, readable while the config has mistakes.
func (w workspace) stateDir() string {
	dir, _ := config.ReadStateDir(w.file, w.root)
	return dir
}

func (w workspace) rel(path string) string { return project.Display(w.root, path) }

// palette colours marks on a terminal, unless NO_COLOR is set.
type palette struct{ on bool }

func paletteFor(env *cli.Env) palette {
	return palette{on: cli.IsTerminal(env.Stdout) && env.Getenv("NO_COLOR") == ""}
}

func (p palette) paint(code, s string) string {
	if !p.on {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p palette) red(s string) string { return p.paint("31", s) }

// mark is a check's mark: a green tick, or a red cross when it failed.
func (p palette) mark(passed bool) string {
	if passed {
		return p.paint("32", "✔")
	}
	return p.red("✘")
}

// Run is the gate command.
func Run(env *cli.Env) error {
	if len(env.Args) > 0 {
		if env.Args[0] == validator.SandboxArg {
			return validator.Serve(env.Stdin, env.Stdout)
		}
		if c := subcommand(env.Args[0]); c != nil {
			return c.run(env, env.Args[1:])
		}
	}
	fl := flags("gate")
	configFile := configFlag(fl)
	opt := client.Flags(fl, env.Getenv)
	timeout := fl.Int("timeout", 0, "the hook timeout the client enforces, in `SECONDS` (gate init writes it; default: the client's own)")
	if err := fl.Parse(env.Args); err != nil {
		return err
	}
	// A terminal would wait for hook input that never comes.
	if fl.NArg() > 0 {
		return usageError("", fmt.Errorf("unknown command %q", fl.Arg(0)))
	}
	if cli.IsTerminal(env.Stdin) {
		return usageError("", errors.New("the gate hook reads a hook input object on stdin; from a terminal, use a command"))
	}
	if opt.Client == "" || opt.Client == client.Claude.Name {
		// Read once to tell a ConfigChange from a stop.
		data, err := client.Read(env.Stdin)
		if err != nil {
			return err
		}
		env.Stdin = bytes.NewReader(data)
		if in, ok, err := configChangeInput(data); ok {
			if err != nil {
				return unreadableChange(env, err)
			}
			return configChange(env, in)
		}
	}
	return stop.Hook(env, *configFile, *opt, time.Duration(*timeout)*time.Second)
}

// runSession is the session id validators see under `gate run`.
const runSession = "gate-run"

type runJSON struct {
	Passed     bool            `json:"passed"`
	Validators []validatorJSON `json:"validators"`
}

type validatorJSON struct {
	Name       string   `json:"name"`
	Prompts    []string `json:"prompts"`
	Passed     bool     `json:"passed"`
	Result     string   `json:"result"`
	Problem    string   `json:"problem,omitempty"`
	ExitCode   int      `json:"exit_code"`
	DurationMS float64  `json:"duration_ms"`
	Output     string   `json:"output"`
	Fix        string   `json:"fix,omitempty"`
}

// runRun is `gate run PROMPT... | --all`: the validators now, by the gate's Decide, queue untouched.
func runRun(env *cli.Env, args []string) error {
	fl := flags("run")
	asJSON := jsonFlag(fl)
	all := fl.Bool("all", false, "run every mapped prompt's validators")
	ws, prompts, err := parseVerb(env, fl, args, -1)
	if err != nil {
		return err
	}
	if *all == (len(prompts) > 0) {
		return usageError("run", fmt.Errorf("name the prompts to run, or --all"))
	}
	cfg, err := ws.load()
	if err != nil {
		return err
	}
	if *all {
		prompts = each(cfg.Mappings, func(m config.Mapping) string { return m.Prompt })
		if len(prompts) == 0 {
			return fmt.Errorf("%s maps no prompts", ws.rel(cfg.File))
		}
	}
	var entries []queue.Entry
	now := time.Now().UTC()
	for _, p := range prompts {
		found, err := resolvePrompt(env, cfg, p)
		if err != nil {
			return err
		}
		for _, m := range found {
			if !slices.ContainsFunc(entries, func(e queue.Entry) bool { return e.Prompt == m.Prompt }) {
				entries = append(entries, queue.Entry{Prompt: m.Prompt, Session: runSession, Trigger: "gate run", Created: now, Updated: now})
			}
		}
	}
	// Ctrl-C kills the validators' process groups.
	ctx, release := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer release()
	v := stop.Decide(ctx, cfg, &hook.Input{SessionID: runSession, HookEventName: hook.Stop}, entries, 0, stop.NoDeadline)
	if *asJSON {
		checks := mapped(v.Checks, func(c stop.Check) validatorJSON {
			r := c.Result
			return validatorJSON{Name: c.Validator.Name, Prompts: c.Prompts, Passed: r.Passed, Result: r.Summary(), Problem: r.Problem,
				ExitCode: r.ExitCode, DurationMS: outcome.Millis(r.Duration), Output: r.Output, Fix: c.Validator.Fix}
		})
		err = printJSON(env, runJSON{Passed: len(v.Failed()) == 0, Validators: checks})
	} else {
		printRun(env, cfg, v)
	}
	if err == nil && len(v.Failed()) > 0 {
		err = cli.Exit(1)
	}
	return err
}

// resolvePrompt turns a key, a /command or a prompt file into mappings.
func resolvePrompt(env *cli.Env, cfg *config.Config, arg string) ([]*config.Mapping, error) {
	if m := cfg.Mapping(arg); m != nil {
		return []*config.Mapping{m}, nil
	}
	var maps []*config.Mapping
	var err error
	if isCommand(arg) {
		maps, err = cfg.MatchCommand(hook.SlashCommand(arg))
	} else {
		maps, err = cfg.MatchRead(readPath(env.Dir, arg))
	}
	if err != nil {
		return nil, err
	}
	if len(maps) == 0 {
		return nil, usageError("run", cli.WithHint(fmt.Errorf("%q is not a mapped prompt, /command or prompt file", arg), knownPrompts(cfg)))
	}
	return maps, nil
}

func knownPrompts(cfg *config.Config) string {
	keys := each(cfg.Mappings[:min(8, len(cfg.Mappings))], func(m config.Mapping) string { return m.Prompt })
	if len(cfg.Mappings) > 8 {
		keys = append(keys, fmt.Sprintf("… %d more", len(cfg.Mappings)-8))
	}
	if len(keys) == 0 {
		return "mappings.toml maps no prompts yet"
	}
	return "mapped prompts: " + strings.Join(keys, ", ")
}

// printRun shows each check and, of a failing one, its output and fix.
func printRun(env *cli.Env, cfg *config.Config, v *stop.Verdict) {
	p := paletteFor(env)
	w := env.Stdout
	// Padded before colouring: escape codes have no width on screen.
	rows := aligned(mapped(v.Checks, func(c stop.Check) []string { return []string{c.Validator.Name, cli.Duration(c.Result.Duration)} }))
	for i, c := range v.Checks {
		r := c.Result
		what := strings.Join(c.Prompts, ", ")
		if !r.Passed && (r.Problem != "" || r.ExitCode > 0) {
			what += ": " + r.Summary() // a file check's output says it all
		}
		fmt.Fprintf(w, "%s %s  %s  %s\n", p.mark(r.Passed), rows[i][0], p.paint("2", rows[i][1]), what)
		if r.Passed {
			continue
		}
		for _, line := range r.Shown(cfg.Settings.OutputLines, cfg.Settings.Output) {
			fmt.Fprintf(w, "    | %s\n", line)
		}
		if c.Validator.Fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", c.Validator.Fix)
		}
	}
	n, failed := len(v.Checks), len(v.Failed())
	switch {
	case n == 0:
		fmt.Fprintln(w, "no validators to run")
	case failed == 0:
		fmt.Fprintf(w, "%s passed\n", cli.Plural(n, "validator", "validators"))
	default:
		fmt.Fprintf(w, "%s: %d passed, %d failed\n", cli.Plural(n, "validator", "validators"), n-failed, failed)
	}
}

// runExplain is `gate explain PATH|/command|KEY`: which mappings a read or a command
// arms and why, by detect's code, or every name of KEY; exit 1 when nothing is armed.
func runExplain(env *cli.Env, args []string) error {
	fl := flags("explain")
	ws, rest, err := parseVerb(env, fl, args, -1)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		return usageError("explain", fmt.Errorf("name a prompt file or a /command"))
	}
	cfg, err := ws.load()
	if err != nil {
		return err
	}
	arg := strings.Join(rest, " ")
	_, statErr := os.Stat(absFrom(env.Dir, arg))
	file := statErr == nil // a file that exists is read, whatever it looks like
	switch {
	case !file && isCommand(arg):
		return explainCommand(env, ws, cfg, hook.SlashCommand(arg))
	case !file && (cfg.Mapping(arg) != nil || path.Ext(arg) == "" && !strings.ContainsAny(arg, " \t")): // a key: mapped, or no extension and no blanks
		return explainKey(env, ws, cfg, arg)
	}
	return explainPath(env, ws, cfg, arg)
}

// isCommand tells "/joke" from "/abs/path/joke.md".
func isCommand(arg string) bool {
	name := hook.SlashCommand(arg)
	return name != "" && !strings.Contains(name, "/")
}

func explainCommand(env *cli.Env, ws workspace, cfg *config.Config, name string) error {
	maps, err := cfg.MatchCommand(name)
	if err != nil {
		return err
	}
	if len(maps) == 0 {
		return armsNothing(env.Stdout, cfg, "/"+name, "no mapping is run as /"+name, name)
	}
	arms(env.Stdout, ws, cfg, "/"+name, "UserPromptExpansion, the Skill tool, or a prompt starting with /"+name, maps, config.Name{Command: name})
	noteUnregistered(env, ws, hook.UserPromptExpansion, hook.UserPromptSubmit)
	return nil
}

func explainPath(env *cli.Env, ws workspace, cfg *config.Config, arg string) error {
	abs := readPath(env.Dir, arg)
	rel, inside := project.Rel(ws.root, abs)
	switch {
	case !inside:
		return armsNothing(env.Stdout, cfg, "a read of "+arg, "it is outside the project root "+ws.root, "")
	case !strings.HasSuffix(abs, ".md"):
		return armsNothing(env.Stdout, cfg, "a read of "+rel, "detect only looks at reads of .md files", "")
	}
	r, err := cfg.JudgeRead(abs)
	switch {
	case err != nil:
		return err
	case r.Outside:
		return armsNothing(env.Stdout, cfg, "a read of "+rel, "it is a symlink leading out of the project, which detect never follows", "")
	case len(r.Maps) == 0:
		key, _ := config.KeyOf(cfg.Settings.PromptsDir, rel)
		return armsNothing(env.Stdout, cfg, "a read of "+rel, whyNot(cfg, rel), key)
	}
	via := ""
	if r.Target != r.Rel {
		via = ", a symlink to " + r.Target
	}
	arms(env.Stdout, ws, cfg, "a read of "+rel, "PostToolUse of Read"+via, r.Maps, config.Name{File: r.Target})
	if _, err := os.Stat(abs); err != nil {
		fmt.Fprintf(env.Stdout, "note: %s does not exist, so the agent cannot read it yet\n", rel)
	}
	noteUnregistered(env, ws, hook.PostToolUse)
	return nil
}

// armsNothing says what subject does not arm and why, names keys near key (if any), and exits 1.
func armsNothing(w io.Writer, cfg *config.Config, subject, why, key string) error {
	fmt.Fprintf(w, "%s arms nothing: %s\n", subject, why)
	if key != "" {
		suggest(w, cfg, key)
	}
	return cli.Exit(1)
}

// readPath is the path a Read of arg names, as the client would pass it.
func readPath(dir, arg string) string {
	if filepath.IsAbs(arg) {
		return arg
	}
	return dir + string(filepath.Separator) + arg
}

// explainKey lists every name that arms key's mapping, marking the files that exist.
func explainKey(env *cli.Env, ws workspace, cfg *config.Config, key string) error {
	w := env.Stdout
	m := cfg.Mapping(key)
	if m == nil {
		fmt.Fprintf(w, "no mapping has prompt = %q\n", key)
		suggest(w, cfg, key)
		return cli.Exit(1)
	}
	fmt.Fprintf(w, "prompt %q (%s:%d) is armed by:\n", m.Prompt, ws.rel(cfg.File), m.Line)
	for _, n := range cfg.Names(m.Prompt) {
		name, why := describe(cfg, m.Prompt, n)
		line := fmt.Sprintf("  %s (%s)", name, why)
		if n.File != "" {
			line = "  a read of " + line[2:]
			if st, err := os.Stat(filepath.Join(ws.root, filepath.FromSlash(n.File))); err == nil && !st.IsDir() {
				line += " (exists)"
			}
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "  validators: %s\n", strings.Join(m.Validators, ", "))
	return nil
}

// arms lists the maps subject arms, by how, each with its validators and which of its names name is.
func arms(w io.Writer, ws workspace, cfg *config.Config, subject, how string, maps []*config.Mapping, name config.Name) {
	fmt.Fprintf(w, "%s arms %s (%s):\n", subject, cli.Plural(len(maps), "mapping", "mappings"), how)
	for _, m := range maps {
		names, why := cfg.Names(m.Prompt), "matched"
		if i := slices.IndexFunc(names, func(n config.Name) bool { return n.File == name.File && n.Command == name.Command }); i >= 0 {
			_, as := describe(cfg, m.Prompt, names[i])
			why = "matched as " + as
		}
		fmt.Fprintf(w, "  prompt %q (%s:%d): %s\n", m.Prompt, ws.rel(cfg.File), m.Line, why)
		fmt.Fprintf(w, "    validators: %s\n", strings.Join(m.Validators, ", "))
	}
}

// describe says, in the client's words, what name n of key is, and why.
func describe(cfg *config.Config, key string, n config.Name) (name, why string) {
	plugin, bare, _ := strings.Cut(key, ":")
	switch {
	case n.File != "" && n.Layout == config.LayoutPromptsDir:
		return n.File, fmt.Sprintf("<prompts_dir>/<key>.md, prompts_dir = %q", cfg.Settings.PromptsDir)
	case n.File != "" && n.Layout == config.LayoutCommand:
		return n.File, "the command file of /" + commandName(key)
	case n.File != "" && n.Layout == config.LayoutDashed:
		return n.File, "the flat command file of /" + config.Command(key)
	case n.File != "" && n.Layout == config.LayoutMirror:
		return n.File, `-/<key with "/" as "-">.md`
	case n.File != "" && n.Layout == config.LayoutSkill:
		return n.File, "the skill /" + key
	case n.Layout == config.LayoutCommand && n.Command != key:
		return "/" + n.Command, fmt.Sprintf("the client's name of .claude/commands/%s.md", key)
	case n.Layout == config.LayoutCommand:
		return "/" + n.Command, fmt.Sprintf("the command .claude/commands/%s.md or the skill .claude/skills/%s/SKILL.md", key, key)
	case n.Layout == config.LayoutDashed:
		return "/" + n.Command, fmt.Sprintf("the flat command .claude/commands/%s.md", n.Command)
	case n.Layout == config.LayoutPlugin:
		return "/" + n.Command, fmt.Sprintf("the command or skill %q of the plugin %q", bare, plugin)
	case n.Layout == config.LayoutPluginBare:
		return "/" + n.Command, "the plugin's skill by its bare name"
	}
	return n.File + n.Command, n.Layout
}

// commandName is the client's name of key's command file.
func commandName(key string) string { return strings.ReplaceAll(key, "/", ":") }

// whyNot explains a .md path inside the root that matches no mapping.
func whyNot(cfg *config.Config, rel string) string {
	key, layout := config.KeyOf(cfg.Settings.PromptsDir, rel)
	switch {
	case key == "":
		return fmt.Sprintf("it is not under prompts_dir (%q), .claude/commands, .claude/skills or -/, where prompt files are matched", cfg.Settings.PromptsDir)
	case layout == config.LayoutSkill:
		return fmt.Sprintf("no mapping has prompt = %q, the skill's name", key)
	case layout == config.LayoutPromptsDir:
		return fmt.Sprintf("no mapping has prompt = %q", key)
	case strings.Contains(key, "/"):
		return fmt.Sprintf("no mapping has prompt = %q, the command /%s", key, commandName(key))
	}
	return fmt.Sprintf("no mapping's prompt key, with \"/\" written as \"-\", is %q", key)
}

// suggest names mapped keys close to name: equal folded, the same last element, or a typo apart.
func suggest(w io.Writer, cfg *config.Config, name string) {
	want := config.Spelling(name)
	var near []string
	for _, m := range cfg.Mappings {
		k := config.Spelling(m.Prompt)
		if k == want || path.Base(k) == path.Base(want) || distance(k, want) <= 2 {
			commands := each(cfg.Commands(m.Prompt), func(c string) string { return "/" + c })
			near = append(near, fmt.Sprintf("%q (%s)", m.Prompt, strings.Join(commands, ", ")))
		}
	}
	if len(near) > 0 {
		fmt.Fprintf(w, "  did you mean %s?\n", strings.Join(near, " or "))
	} else {
		fmt.Fprintf(w, "  %s\n", knownPrompts(cfg))
	}
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur := make([]int, len(rb)+1)
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(rb)]
}

// noteUnregistered notes when no settings file registers detect for events.
func noteUnregistered(env *cli.Env, ws workspace, events ...string) {
	relevant := slices.DeleteFunc(expected(), func(h settings.Hook) bool {
		return settings.Program(h.Command) != hook.Detect || !slices.Contains(events, h.Event)
	})
	for _, f := range settingsFiles(env, ws.root).sharedFirst() {
		if f.doc == nil {
			continue
		}
		for _, h := range relevant { // one at a time: a list of another event that is misshapen does not hide it
			if found, err := f.doc.Lookup([]settings.Hook{h}); err == nil && found[0].Registered {
				return
			}
		}
	}
	if len(relevant) > 0 {
		fmt.Fprintf(env.Stdout, "note: %s is not registered in %s, so nothing sees this yet (gate init)\n", relevant[0], settingsFile)
	}
}
