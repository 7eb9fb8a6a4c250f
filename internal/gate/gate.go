// Package gate is the gate command: with a subcommand it is a tool a person
// runs (init, check, status, run, explain, log, stats; see commands.go);
// with none it is the Stop / SubagentStop hook, whose decision is package
// stop, and Claude Code's ConfigChange hook (configchange.go).
package gate

import (
	"bytes"
	"errors"
	"fmt"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/stop"
	"github.com/stopgate/stopgate/internal/validator"
)

// Run is the gate command.
func Run(env *cli.Env) error {
	if len(env.Args) > 0 && env.Args[0] == validator.SandboxArg {
		// The runner inside a stop's sandbox (package validator).
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
	// Refused as a hook: arguments it does not take, or a terminal, where
	// it would wait for hook input that never comes.
	if fl.NArg() > 0 {
		return usageError("", fmt.Errorf("unknown command %q", fl.Arg(0)))
	}
	if cli.IsTerminal(env.Stdin) {
		return usageError("", errors.New("the gate hook reads a hook input object on stdin; from a terminal, use a command"))
	}
	if opt.Client == "" || opt.Client == client.Claude.Name {
		// Claude Code's ConfigChange goes to the gate too (configchange.go).
		// The input is read once, so that a ConfigChange can be told from
		// a stop, and handed back as the stop hook's stdin.
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
