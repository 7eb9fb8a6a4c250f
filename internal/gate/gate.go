// Package gate is the gate hook: at Stop and SubagentStop it runs the
// validators of the prompts pending for that scope and decides whether the
// agent may stop.
//
// Contract (stdin: one Stop or SubagentStop hook input object):
//
//	nothing pending                exit 0, no output
//	every validator passes         entries removed, exit 0, no output
//	a validator fails              {"decision":"block","reason":…}, exit 0: the
//	                               agent gets the failures and fixes and works on
//	after max_blocks blocked stops {"continue":false,"stopReason":…}, exit 0: the
//	  (or on_failure = "halt")     session halts and the user sees the failures
//	config that cannot be read     {"continue":false,"stopReason":"mappings.toml:LINE: …"}
//	bad hook input                 one line on stderr, exit 1
//
// Stop takes the session's main-thread entries; SubagentStop takes that
// agent's. Validators come from the current mappings.toml by prompt key:
// the gate never runs anything stored in the queue.
package gate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/dialect"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
)

// Events are the hook events the gate handles.
var Events = []string{hook.Stop, hook.SubagentStop}

// Run is the gate command.
func Run(env *cli.Env) error {
	if len(env.Args) > 0 {
		if c := subcommand(env.Args[0]); c != nil {
			return c.run(env, env.Args[1:]) // a person's command: see commands.go
		}
	}
	fl := flag.NewFlagSet("gate", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	configFile := fl.String("config", "", "mappings file (default <root>/mappings.toml)")
	client := fl.String("client", "", "the agent client the hook is registered for (gate init --client)")
	event := fl.String("event", "", "the client's event, when its input does not name it")
	if err := fl.Parse(env.Args); err != nil {
		return err
	}
	if err := notAHook(env, fl); err != nil {
		return err
	}
	in, err := decodeStop(env, dialect.Options{Client: *client, Event: *event, Getenv: env.Getenv})
	if in == nil {
		return err
	}
	root := project.Root(env.Getenv, in.Cwd, env.Dir)
	scope := queue.Scope{Session: in.SessionID, Agent: in.AgentID}
	if in.HookEventName == hook.Stop {
		scope.Agent = "" // the main thread's stop, whatever else the input says
	}

	// The compiled config, from the index cache when it is current: most
	// stops have nothing to judge, and parsing a mappings.toml of thousands
	// of mappings at every one would cost more than the stop. Its errors are
	// the loader's, the ones `gate check` calls errors: they halt.
	compiled, err := config.LoadCompiled(config.Path(root, *configFile, env.Dir), root)
	if err != nil {
		if *configFile == "" && errors.Is(err, fs.ErrNotExist) {
			return missingConfig(env, root, scope)
		}
		return hook.Write(env.Stdout, hook.Halt(configReason(err)))
	}
	defer compiled.Close()
	q, err := queue.Open(compiled.StateDir())
	if err != nil {
		return err
	}
	entries, bad, err := q.Snapshot(scope)
	if err != nil {
		return err
	}
	for _, b := range bad {
		fmt.Fprintf(env.Stderr, "gate: set aside %s: %v\n", b.Path, b.Error)
	}
	// The count is ours, not derived from stop_hook_active: the client has
	// been seen to send false on repeated stops within one turn
	// (anthropics/claude-code#54360), which would let a loop run into the
	// client's own cap. It resets only on a passing stop or a halt.
	prior := q.Blocks(scope)

	// The transcript may show prompts armed whose entries are gone.
	rec := reconcile(env, compiled, in, q, scope, entries)
	if rec != nil {
		entries = append(entries, rec.missing...)
	}

	// Only a stop with something to judge needs the whole config.
	v := &Verdict{}
	if len(entries) > 0 {
		cfg, err := compiled.Config()
		if err != nil {
			return hook.Write(env.Stdout, hook.Halt(configReason(err)))
		}
		v = Decide(context.Background(), cfg, in, entries, prior)
	}
	rec.settle(env, q, v)
	return v.apply(env, q, scope, prior)
}

// apply writes the verdict: the queue and block count first, so that a gate
// killed after deciding errs towards checking again, then the answer. A
// stop that changes neither (most stops: nothing pending) writes nothing.
func (v *Verdict) apply(env *cli.Env, q *queue.Queue, scope queue.Scope, prior int) error {
	if len(v.Done) > 0 {
		if err := q.Remove(scope, v.Done); err != nil {
			return err
		}
	}
	if v.Blocks != prior {
		if err := q.SetBlocks(scope, v.Blocks); err != nil {
			return err
		}
	}
	v.record(env, q, scope)
	switch v.Kind {
	case Block:
		return hook.Write(env.Stdout, hook.Block(v.Reason))
	case Halt:
		return hook.Write(env.Stdout, hook.Halt(v.Reason))
	}
	return nil
}

// decodeStop decodes the stop in its client's dialect and binds stdout to
// it. A stop from another client than the registration names halts: a hook
// registered wrong must never let a stop through unchecked. A stop the
// client sends but stopgate does not answer is no input and no error.
func decodeStop(env *cli.Env, opt dialect.Options) (*hook.Input, error) {
	in, err := dialect.Decode(env.Stdin, opt, Events...)
	var mm *dialect.MismatchError
	switch {
	case errors.Is(err, dialect.ErrIgnored):
		return nil, nil
	case errors.As(err, &mm) && mm.Input != nil:
		return nil, hook.Write(hook.Bind(env.Stdout, mm.Input), hook.Halt("stopgate cannot check this stop: "+err.Error()))
	case err != nil:
		return nil, err
	}
	env.Stdout = hook.Bind(env.Stdout, in)
	return in, nil
}

// missingConfig handles a project whose mappings.toml is gone: nothing can
// be pending unless it was deleted after prompts were armed, and then the
// stop must not pass unchecked.
func missingConfig(env *cli.Env, root string, scope queue.Scope) error {
	q, err := queue.Open(filepath.Join(root, config.DefaultStateDir))
	if err != nil {
		return nil
	}
	entries, _, _ := q.Snapshot(scope)
	if len(entries) == 0 {
		return nil
	}
	return hook.Write(env.Stdout, hook.Halt(fmt.Sprintf(
		"stopgate: %s is missing, but %d prompt(s) are pending for this session; restore it (the agent must not remove its own gate)",
		project.ConfigName, len(entries))))
}

func configReason(err error) string {
	var ps config.Problems
	if errors.As(err, &ps) {
		return "stopgate cannot check this stop: mappings.toml has mistakes; fix them (the agent must not edit its own gate):\n" +
			strings.Join(ps.Errors().Lines(), "\n")
	}
	return "stopgate cannot check this stop: " + err.Error()
}
