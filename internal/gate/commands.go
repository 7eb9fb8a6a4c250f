// Package gate is the gate command: with a subcommand, the CLI a person
// runs; with none, the Stop / SubagentStop hook (package stop) and Claude
// Code's ConfigChange hook (claude.go).
package gate

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/project"
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
		{"help", "", "this list (also -h, --help)", runHelp},
	}
}

func subcommand(name string) *command {
	for _, c := range commands() {
		if c.name == name {
			return &c
		}
	}
	return nil
}

func runHelp(env *cli.Env, args []string) error {
	Usage(env.Stdout)
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
	var h *cli.Hinted
	if errors.As(err, &h) {
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
func sinceFlag(fl *flag.FlagSet) *string {
	return fl.String("since", "", "only decisions since `D`: a duration (90m, 24h, 7d) or a date (2006-01-02, RFC 3339)")
}
func clientFlag(fl *flag.FlagSet, does string) *string {
	return fl.String("client", "", does+" ("+strings.Join(client.Names, ", ")+")")
}

// parse parses args, flags after arguments too (cli.Parse), and returns
// the arguments; -h prints the usage and ends with exit 0 (errHelp).
func parse(env *cli.Env, fl *flag.FlagSet, args []string) ([]string, error) {
	rest, err := cli.Parse(fl, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprintln(env.Stdout, usageLine(fl.Name()))
		fl.SetOutput(env.Stdout)
		fl.PrintDefaults()
		return nil, errHelp
	case err != nil:
		return nil, usageError(fl.Name(), err)
	}
	return rest, nil
}

// parseFlags parses args for a command that takes flags only.
func parseFlags(env *cli.Env, fl *flag.FlagSet, args []string) error {
	_, err := parseAtMost(env, fl, args, 0)
	return err
}

// parseAtMost parses args, refusing more than most arguments (-1: any).
func parseAtMost(env *cli.Env, fl *flag.FlagSet, args []string, most int) ([]string, error) {
	rest, err := parse(env, fl, args)
	if err == nil && most >= 0 && len(rest) > most {
		err = usageError(fl.Name(), fmt.Errorf("unexpected argument %q", rest[most]))
	}
	return rest, err
}

// parseVerb parses args with --config (parseAtMost), and returns the
// workspace it names and the arguments.
func parseVerb(env *cli.Env, fl *flag.FlagSet, args []string, most int) (workspace, []string, error) {
	configFile := configFlag(fl)
	rest, err := parseAtMost(env, fl, args, most)
	return workspaceOf(env, *configFile), rest, err
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

func workspaceOf(env *cli.Env, configFile string) workspace {
	root := project.Find(env.Getenv, env.Dir)
	return workspace{root: root, file: config.Path(root, configFile, env.Dir)}
}

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

func (w workspace) rel(path string) string {
	return project.Display(w.root, path)
}

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
func (p palette) dim(s string) string { return p.paint("2", s) }

// mark is a check's mark: a green tick, or a red cross when it failed.
func (p palette) mark(passed bool) string {
	if passed {
		return p.paint("32", "✔")
	}
	return p.red("✘")
}

// Run is the gate command.
func Run(env *cli.Env) error {
	if len(env.Args) > 0 && env.Args[0] == validator.SandboxArg {
		return validator.Serve(env.Stdin, env.Stdout)
	}
	if len(env.Args) > 0 {
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
		// Read once to tell a ConfigChange (claude.go) from a stop.
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
