// Package gate is the gate command: with a subcommand, the CLI a person runs; with none, the Stop / SubagentStop hook (package stop) and Claude Code's ConfigChange hook (init.go).
package gate

import (
	"bytes"
	"cmp"
	"context"
	_ "embed"
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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"text/template"
	"time"
	"unicode/utf8"

	"github.com/stopgate/stopgate/internal/atomicfile"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/report"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/stop"
	"github.com/stopgate/stopgate/internal/telemetry"
	"github.com/stopgate/stopgate/internal/validator"
)

// command is one of gate's subcommands. Exit codes: 0 done; 1 findings or a failure, one line on stderr; 2 a usage mistake.
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
		{"version", "", "the stopgate version and the commit it was built from (also --version)", func(env *cli.Env, args []string) error {
			_, err := parseAtMost(env, flags("version"), args, 0)
			if err == nil {
				fmt.Fprintln(env.Stdout, cli.Version("gate"))
			}
			return err
		}},
		{"help", "", "this list (also -h, --help)", func(*cli.Env, []string) error { return flag.ErrHelp }}, // cli.Run prints Usage
	}
}

func subcommand(name string) *command {
	cs := commands()
	if i := slices.IndexFunc(cs, func(c command) bool { return c.name == name }); i >= 0 {
		return &cs[i]
	}
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

// parseAtMost parses args, flags after arguments too (cli.Parse), refusing more than most arguments (-1: any); -h prints the usage and ends with exit 0 (errHelp).
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
type palette bool

func paletteFor(env *cli.Env) palette {
	return palette(cli.IsTerminal(env.Stdout) && env.Getenv("NO_COLOR") == "")
}

func (p palette) Paint(code, s string) string {
	if !p {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

func (p palette) Red(s string) string { return p.Paint("31", s) }

// mark is a check's mark: a green tick, or a red cross when it failed.
func (p palette) Mark(passed bool) string {
	if passed {
		return p.Paint("32", "✔")
	}
	return p.Red("✘")
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
		if in, ok, err := configChangeInput(data); ok && err == nil {
			return configChange(env, in)
		} else if ok { // refused in a stopgate project
			root := project.Root(env.Getenv, "", env.Dir)
			if !stopgateProject(env, root, config.Path(root, "", env.Dir), settingsFiles(env, root)) {
				return err
			}
			return hook.AnswerTo(env.Stdout, nil).Write(hook.Block("stopgate refused this settings change: its ConfigChange input could not be read (" +
				err.Error() + "), so whether it weakens stopgate's hooks or its wall cannot be told; this session keeps the settings it had."))
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
	v := stop.Decide(ctx, cfg, &hook.Input{SessionID: runSession, HookEventName: hook.Stop}, entries)
	failed := len(v.Failed())
	if *asJSON {
		checks := mapped(v.Checks, func(c stop.Check) validatorJSON {
			r := c.Result
			return validatorJSON{Name: c.Validator.Name, Prompts: c.Prompts, Passed: r.Passed, Result: r.Summary(), Problem: r.Problem,
				ExitCode: r.ExitCode, DurationMS: outcome.Millis(r.Duration), Output: r.Output, Fix: c.Validator.Fix}
		})
		err = printJSON(env, runJSON{Passed: failed == 0, Validators: checks})
	} else { // the names and durations padded before colouring: escape codes have no width on screen
		err = texts().ExecuteTemplate(env.Stdout, "run", struct {
			P              palette
			Checks         []stop.Check
			Rows, Shown    [][]string
			Passed, Failed int
		}{paletteFor(env), v.Checks, aligned(mapped(v.Checks, func(c stop.Check) []string { return []string{c.Validator.Name, cli.Duration(c.Result.Duration)} })),
			mapped(v.Checks, func(c stop.Check) []string { return c.Result.Shown(cfg.Settings.OutputLines, cfg.Settings.Output) }), len(v.Checks) - failed, failed})
	}
	if err == nil && failed > 0 {
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

// runExplain is `gate explain PATH|/command|KEY`: which mappings a read or a command arms and why, by detect's code, or every name of KEY; exit 1 when nothing is armed.
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
		return armsNothing(env.Stdout, cfg, "/"+name+" arms nothing: no mapping is run as /"+name, name)
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
		return armsNothing(env.Stdout, cfg, "a read of "+arg+" arms nothing: it is outside the project root "+ws.root, "")
	case !strings.HasSuffix(abs, ".md"):
		return armsNothing(env.Stdout, cfg, "a read of "+rel+" arms nothing: detect only looks at reads of .md files", "")
	}
	r, err := cfg.JudgeRead(abs)
	switch {
	case err != nil:
		return err
	case r.Outside:
		return armsNothing(env.Stdout, cfg, "a read of "+rel+" arms nothing: it is a symlink leading out of the project, which detect never follows", "")
	case len(r.Maps) == 0:
		key, _ := config.KeyOf(cfg.Settings.PromptsDir, rel)
		return armsNothing(env.Stdout, cfg, "a read of "+rel+" arms nothing: "+whyNot(cfg, rel), key)
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

// armsNothing says what arms nothing and why, names keys near key (if any), and exits 1.
func armsNothing(w io.Writer, cfg *config.Config, said, key string) error {
	fmt.Fprintln(w, said)
	if key != "" {
		// mapped keys close to key: equal folded, the same last element, or a typo apart
		want := config.Spelling(key)
		var near []string
		for _, m := range cfg.Mappings {
			k := config.Spelling(m.Prompt)
			if k == want || path.Base(k) == path.Base(want) || distance(k, want) <= 2 {
				near = append(near, fmt.Sprintf("%q (%s)", m.Prompt, strings.Join(each(cfg.Commands(m.Prompt), func(c string) string { return "/" + c }), ", ")))
			}
		}
		if len(near) > 0 {
			fmt.Fprintf(w, "  did you mean %s?\n", strings.Join(near, " or "))
		} else {
			fmt.Fprintf(w, "  %s\n", knownPrompts(cfg))
		}
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
		return armsNothing(w, cfg, fmt.Sprintf("no mapping has prompt = %q", key), key)
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
	files := map[string]string{config.LayoutPromptsDir: fmt.Sprintf("<prompts_dir>/<key>.md, prompts_dir = %q", cfg.Settings.PromptsDir),
		config.LayoutCommand: "the command file of /" + commandName(key), config.LayoutDashed: "the flat command file of /" + config.Command(key),
		config.LayoutMirror: `-/<key with "/" as "-">.md`, config.LayoutSkill: "the skill /" + key}
	switch why, ok := files[n.Layout]; {
	case n.File != "" && ok:
		return n.File, why
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

// runLog is `gate log`: the gate's decisions, one line each, oldest first.
func runLog(env *cli.Env, args []string) error {
	fl := flags("log")
	asJSON := jsonFlag(fl)
	export := fl.Bool("export", false, "send the decisions over OTLP, as [telemetry] says, instead of printing them (a backfill)")
	timeout := fl.Duration("timeout", time.Minute, "with --export: give up after `D`")
	d, err := readDecisions(env, fl, args)
	switch {
	case err != nil:
		return err
	case *export: // the decisions sent over OTLP in one request
		cfg, err := d.ws.load()
		if err != nil {
			return err
		}
		if !telemetry.Enabled(cfg.Telemetry, env.Getenv) {
			return cli.WithHint(errors.New("telemetry is off: nothing to export to"), "[telemetry] enabled = true in mappings.toml turns it on; gate check shows where it goes")
		}
		if len(d.records) == 0 {
			fmt.Fprint(env.Stdout, d.none)
			return nil
		}
		if err := telemetry.Send(telemetry.Request{Config: cfg.Telemetry, Root: d.ws.root, Deadline: *timeout, Records: d.records}); err != nil {
			return fmt.Errorf("telemetry export failed: %w", err)
		}
		fmt.Fprintf(env.Stdout, "exported %s: %s\n", cli.Plural(len(d.records), "decision", "decisions"), telemetry.Describe(cfg.Telemetry, env.Getenv))
		return nil
	case *asJSON:
		enc := json.NewEncoder(env.Stdout)
		for _, r := range d.records {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
		return nil
	case len(d.records) == 0:
		fmt.Fprint(env.Stdout, d.none)
	}
	return texts().ExecuteTemplate(env.Stdout, "log", struct {
		P       palette
		Records []outcome.Record
	}{paletteFor(env), d.records})
}

// each is f of every x, leaving out the empty ones.
func each[T any](xs []T, f func(T) string) []string {
	var out []string
	for _, x := range xs {
		if s := f(x); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// mapped is f of every x.
func mapped[T, U any](xs []T, f func(T) U) []U {
	out := make([]U, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

// resultOf is a failed check's result when it is more than "failed".
func resultOf(c outcome.Check) string {
	if c.Passed || c.Result == "failed" {
		return ""
	}
	return " (" + c.Result + ")"
}

// runStats is `gate stats`: rates, attempts, sessions, slow validators, reuse and judges.
func runStats(env *cli.Env, args []string) error {
	fl := flags("stats")
	asJSON := jsonFlag(fl)
	d, err := readDecisions(env, fl, args)
	if err != nil {
		return err
	}
	st := outcome.Summarize(d.records)
	switch {
	case *asJSON:
		st.Validators = st.Slowest() // --json lists them slowest first
		return printJSON(env, st)
	case st.Decisions == 0:
		fmt.Fprint(env.Stdout, d.none)
		return nil
	}
	prompts := tableOf([]string{"prompt", "checked", "passed", "pass rate", "attempts to pass (avg / max)", "still failing"}, st.Prompts, func(p outcome.PromptStats) []string {
		attempts := "-"
		if p.Resolved > 0 {
			attempts = fmt.Sprintf("%.1f / %d", p.AttemptsAvg, p.AttemptsMax)
		}
		return []string{p.Prompt, strconv.Itoa(p.Checked), strconv.Itoa(p.Passed), rate(p.Passed, p.Checked), attempts, strconv.Itoa(p.Unresolved)}
	})
	validators := tableOf([]string{"validator", "runs", "passed", "pass rate", "median", "max"}, st.Validators, func(v outcome.ValidatorStats) []string {
		return []string{v.Name, strconv.Itoa(v.Runs), strconv.Itoa(v.Passed), rate(v.Passed, v.Runs), cli.Duration(v.Median), cli.Duration(v.Max)}
	})
	observed := func(name string, observed, wouldBlock int) []string {
		if observed == 0 {
			return nil
		}
		return []string{name, strconv.Itoa(observed), strconv.Itoa(wouldBlock), rate(wouldBlock, observed)}
	}
	v := statsView{Stats: st, Tables: slices.DeleteFunc([][][]string{prompts, validators}, func(t [][]string) bool { return len(t) == 1 }),
		ObservePrompts:    tableOf([]string{"prompt", "observed", "would block", "would-block rate"}, st.Prompts, func(p outcome.PromptStats) []string { return observed(p.Prompt, p.Observed, p.WouldBlock) }),
		ObserveValidators: tableOf([]string{"validator", "observed", "would block", "would-block rate"}, st.Validators, func(v outcome.ValidatorStats) []string { return observed(v.Name, v.Observed, v.WouldBlock) }),
		Blocked:           slices.DeleteFunc(slices.Clone(st.Sessions), func(s outcome.SessionStats) bool { return s.Blocks+s.Halts == 0 }), Slow: st.Slowest(),
		Reusers: slices.DeleteFunc(slices.Clone(st.Validators), func(v outcome.ValidatorStats) bool { return v.Reused == 0 }),
		Judges:  slices.DeleteFunc(slices.Clone(st.Validators), func(v outcome.ValidatorStats) bool { return v.Asked+v.Cached == 0 })}
	if len(v.ObservePrompts) == 1 {
		v.ObservePrompts = nil
	}
	v.MostBlocked, v.Slow = v.Blocked[:min(5, len(v.Blocked))], v.Slow[:min(5, len(v.Slow))]
	return texts().ExecuteTemplate(env.Stdout, "stats", v)
}

// statsView is what gate stats prints: the Stats, its tables, and the lists of its last lines.
type statsView struct {
	outcome.Stats
	Tables                            [][][]string // of prompts and of validators, those with rows
	ObservePrompts, ObserveValidators [][]string   // nil without observe-mode stops
	Blocked, MostBlocked              []outcome.SessionStats
	Slow, Reusers, Judges             []outcome.ValidatorStats
}

//go:embed text.tmpl
var textsText string

// texts are the verbs' human output, parsed at the first use.
var texts = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("texts").Funcs(template.FuncMap{"plural": cli.Plural, "dur": cli.Duration, "table": table, "join": strings.Join, "result": resultOf,
		"failed": func(cs []outcome.Check) string { // the checks that failed, with their results
			return strings.Join(each(cs, func(c outcome.Check) string {
				if c.Passed {
					return ""
				}
				return c.Name + resultOf(c)
			}), ", ")
		},
		"reconciled": func(ds []outcome.Discrepancy) string {
			return strings.Join(each(ds, func(d outcome.Discrepancy) string { return d.Prompt }), ", ")
		},
		"age":  func(s int64) string { return age(time.Duration(s) * time.Second) },
		"when": func(t time.Time) string { return t.Local().Format("2006-01-02 15:04") }}).Parse(textsText))
})

// tableOf is a table of header and a row of each x that row makes one of (non-nil).
func tableOf[T any](header []string, xs []T, row func(T) []string) [][]string {
	rows := [][]string{header}
	for _, x := range xs {
		if r := row(x); r != nil {
			rows = append(rows, r)
		}
	}
	return rows
}

func rate(n, of int) string {
	if of == 0 {
		return "-"
	}
	return fmt.Sprintf("%d%%", (n*100+of/2)/of)
}

// table is rows aligned, a line each.
func table(rows [][]string) string {
	return strings.Join(mapped(aligned(rows), func(r []string) string { return strings.Join(r, "  ") }), "\n") + "\n"
}

// aligned pads the cells of rows, in place, into columns: the first left-aligned, the rest right.
func aligned(rows [][]string) [][]string {
	widths := map[int]int{}
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(cell))
		}
	}
	for _, r := range rows {
		for i, cell := range r {
			pad := strings.Repeat(" ", widths[i]-utf8.RuneCountInString(cell))
			r[i] = pad + cell
			if i == 0 {
				r[i] = cell + pad
			}
		}
	}
	return rows
}

// decisions are the log's records since --since, and what to say when there are none.
type decisions struct {
	records []outcome.Record
	none    string
	ws      workspace
}

// readDecisions parses the flags of log, stats or report and reads the outcome log.
func readDecisions(env *cli.Env, fl *flag.FlagSet, args []string) (*decisions, error) {
	sinceFlag := fl.String("since", "", "only decisions since `D`: a duration (90m, 24h, 7d) or a date (2006-01-02, RFC 3339)")
	ws, _, err := parseVerb(env, fl, args, 0)
	if err != nil {
		return nil, err
	}
	since, err := parseSince(*sinceFlag, time.Now())
	if err != nil {
		return nil, usageError(fl.Name(), err)
	}
	dir := ws.stateDir()
	records, skipped, err := outcome.Read(dir, since)
	if err != nil {
		return nil, err
	}
	if skipped > 0 {
		fmt.Fprintf(env.Stderr, "gate: skipped %s of the outcome log that did not parse\n", cli.Plural(skipped, "line", "lines"))
	}
	none := "no gate decisions in " + ws.rel(dir) + "/" + outcome.FileName
	if !since.IsZero() {
		none += " since " + since.Local().Format("2006-01-02 15:04:05")
	}
	return &decisions{records: records, none: none + "\n", ws: ws}, nil
}

// parseSince reads --since: a duration back from now (also d, w), or a date.
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for unit, days := range map[string]int{"d": 1, "w": 7} {
		if n, err := strconv.Atoi(strings.TrimSuffix(s, unit)); err == nil && n >= 0 && strings.HasSuffix(s, unit) {
			return now.AddDate(0, 0, -n*days), nil
		}
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q is neither a duration (90m, 24h, 7d) nor a date (2006-01-02)", s)
}

// runReport is `gate report`: the outcome log as one HTML page, rendered, then written at once.
func runReport(env *cli.Env, args []string) error {
	fl := flags("report")
	out := fl.String("out", "stopgate-report.html", "the HTML `FILE` to write")
	d, err := readDecisions(env, fl, args)
	if err != nil {
		return err
	}
	var page bytes.Buffer
	if err := report.Write(&page, d.records, "stopgate: "+filepath.Base(d.ws.root), time.Now()); err != nil {
		return err
	}
	if err := atomicfile.Write(absFrom(env.Dir, *out), page.Bytes(), atomicfile.Options{TempPrefix: ".stopgate-report-", Perm: 0o644, NoSync: true}); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	fmt.Fprintf(env.Stdout, "wrote %s: %s\n", *out, cli.Plural(len(d.records), "decision", "decisions"))
	return nil
}

type statusJSON struct {
	StateDir string        `json:"state_dir"`
	Pending  int           `json:"pending"`
	Scopes   []scopeJSON   `json:"scopes"`
	SetAside []setAsideRef `json:"set_aside"`
}

type scopeJSON struct {
	Session   string      `json:"session_id"`
	Agent     string      `json:"agent_id,omitempty"`
	AgentType string      `json:"agent_type,omitempty"`
	Blocks    int         `json:"blocks"`
	MaxBlocks int         `json:"max_blocks"`
	Entries   []entryJSON `json:"entries"`
}

type entryJSON struct {
	Prompt     string    `json:"prompt"`
	Trigger    string    `json:"trigger"`
	Path       string    `json:"path,omitempty"`
	Arms       int       `json:"arms"`
	Created    time.Time `json:"created"`
	Updated    time.Time `json:"updated"`
	AgeSeconds int64     `json:"age_seconds"`
	By         string    `json:"-"` // what armed it, for the text
}

type setAsideRef struct {
	Path string `json:"path"`
	Note string `json:"note,omitempty"`
}

// runStatus is `gate status`: what is pending, per scope, and what was set aside as unreadable.
func runStatus(env *cli.Env, args []string) error {
	fl := flags("status")
	asJSON := jsonFlag(fl)
	ws, _, err := parseVerb(env, fl, args, 0)
	if err != nil {
		return err
	}
	dir := ws.stateDir()
	maxBlocks := config.DefaultMaxBlocks
	if cfg, _, _ := config.Inspect(ws.file, ws.root, config.FileOnly); cfg != nil {
		maxBlocks = cfg.Settings.MaxBlocks
	}
	st := statusJSON{StateDir: ws.rel(dir), Scopes: []scopeJSON{}}
	q := queue.Open(dir)
	scopes, bad, err := q.List()
	if _, held := errors.AsType[*queue.HeldError](err); held {
		return cli.WithHint(err, "every stopgate hook waits for this lock: meanwhile a stop with prompts armed halts, and detect cannot arm",
			"end the process holding it; stopgate's own hooks hold it for milliseconds only")
	}
	if err != nil {
		return err
	}
	now := time.Now()
	for _, p := range scopes {
		s := scopeJSON{Session: p.Scope.Session, Agent: p.Scope.Agent, Blocks: p.Blocks, MaxBlocks: maxBlocks, Entries: []entryJSON{}}
		for _, e := range p.Entries {
			s.AgentType = cmp.Or(e.AgentType, s.AgentType)
			// What armed it, in the words of what the agent did.
			by := cmp.Or(map[string]string{queue.TriggerRead: "read " + ws.rel(e.Path), queue.TriggerCommand: "ran /" + config.Command(e.Prompt),
				queue.TriggerPrompt: "prompt /" + config.Command(e.Prompt)}[e.Trigger], e.Trigger)
			s.Entries = append(s.Entries, entryJSON{Prompt: e.Prompt, Trigger: e.Trigger, Path: e.Path, Arms: e.Arms, By: by,
				Created: e.Created, Updated: e.Updated, AgeSeconds: int64(now.Sub(e.Created).Seconds())})
		}
		st.Pending += len(p.Entries)
		st.Scopes = append(st.Scopes, s)
	}
	aside, err := q.SetAside()
	if err != nil {
		return err
	}
	notes := map[string]string{}
	for _, b := range bad {
		notes[b.Path] = b.Error.Error()
	}
	st.SetAside = mapped(aside, func(a string) setAsideRef { return setAsideRef{Path: ws.rel(a), Note: notes[a]} })
	if *asJSON {
		return printJSON(env, st)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0) // aligns each scope's entries
	if err := texts().ExecuteTemplate(tw, "status", st); err != nil {
		return err
	}
	return tw.Flush()
}

// age writes a duration the way a person says it: 42s, 5m, 3h, 2d.
func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

// runClear is `gate clear SESSION`: a person drops a session's armed prompts and block counts, recorded in the log (the guard and the wall keep the agent from it).
func runClear(env *cli.Env, args []string) error {
	fl := flags("clear")
	ws, rest, err := parseVerb(env, fl, args, -1)
	if err != nil {
		return err
	}
	if len(rest) != 1 || rest[0] == "" {
		return usageError("clear", errors.New("name one session (gate status lists those with prompts armed)"))
	}
	session, dir := rest[0], ws.stateDir()
	q := queue.Open(dir)
	all, _, err := q.List()
	if err != nil {
		return err
	}
	mine := slices.DeleteFunc(all, func(p queue.Pending) bool { return p.Scope.Session != session })
	if len(mine) == 0 {
		return cli.WithHint(fmt.Errorf("session %q has nothing armed in %s; nothing changed", session, ws.rel(dir)), "gate status lists the sessions that do")
	}
	now := time.Now().UTC()
	for _, p := range mine {
		prompts := each(p.Entries, func(e queue.Entry) string { return e.Prompt })
		// Recorded first: prompts dropped unrecorded would read as never armed.
		if err := outcome.Append(dir, outcome.Record{Time: now, Event: "clear", Session: session, Agent: p.Scope.Agent, Prompts: prompts, Checks: []outcome.Check{}, Decision: outcome.Cleared}); err != nil {
			return err
		}
		if err := q.Remove(p.Scope, p.Entries); err != nil {
			return err
		}
		if err := q.SetBlocks(p.Scope, 0, ""); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "cleared %s: %s (a blocked-stop count of %d reset); should it stop again, what its transcript shows read is judged\n",
			p.Scope, cli.Plural(len(prompts), "prompt", "prompts"), p.Blocks)
	}
	return nil
}

// runVerdict is `gate verdict SESSION`, for CI: exit 0 only when the session's last stop passed, nothing armed since; the session is named, as the agent can append to the log.
func runVerdict(env *cli.Env, args []string) error {
	fl := flags("verdict")
	ws, rest, err := parseVerb(env, fl, args, 1)
	if err != nil {
		return err
	}
	if len(rest) == 0 {
		fmt.Fprintln(env.Stdout, "refused: name the session to judge, as the client reports it (claude -p --output-format json gives session_id): the outcome log's newest session is not taken, as the agent can append to the log")
		return cli.Exit(1)
	}
	dir := ws.stateDir()
	records, skipped, err := outcome.Read(dir, time.Time{})
	if err != nil {
		return err
	}
	if skipped > 0 {
		// A torn line may be the session's last stop.
		fmt.Fprintf(env.Stdout, "unknown: %s of %s/%s did not parse, and the last stop may be among them\n", cli.Plural(skipped, "line", "lines"), ws.rel(dir), outcome.FileName)
		return cli.Exit(1)
	}
	scopes, _, err := queue.Open(dir).List()
	if err != nil {
		return fmt.Errorf("reading what is armed: %w", err)
	}
	var armed []string
	for _, p := range scopes {
		for _, e := range p.Entries {
			if p.Scope.Session == rest[0] && !slices.Contains(armed, e.Prompt) {
				armed = append(armed, e.Prompt)
			}
		}
	}
	var last *outcome.Record
	for i := range records {
		r := &records[i]
		// A subagent's stop counts only when the main thread has none.
		if r.Session == rest[0] && (r.Agent == "" || last == nil || last.Agent != "") {
			last = r
		}
	}
	err = texts().ExecuteTemplate(env.Stdout, "verdict", struct {
		Session string
		Armed   []string
		Last    *outcome.Record
		Was     map[string]string
	}{rest[0], armed, last, map[string]string{outcome.Block: "blocked", outcome.Halt: "halted",
		outcome.WouldBlock: "let through by observe mode, but would have been blocked", outcome.WouldHalt: "let through by observe mode, but would have been halted"}})
	if err == nil && (last == nil || last.Decision != outcome.Pass || len(armed) > 0) {
		err = cli.Exit(1)
	}
	return err
}
