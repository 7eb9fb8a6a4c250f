// Package detect is the detect hook (docs/architecture.md): it arms a prompt's validators when the agent
// reads a mapped prompt or invokes a mapped command, and is the tamper guard at PreToolUse (guardTool).
// Bad input or config: one line on stderr, exit 1, nothing enqueued; never exit 2 (it would block a call).
package detect

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/hashicorp/go-multierror"

	"github.com/stopgate/stopgate/internal/baseline"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/trust"
)

// Events are the hook events detect handles.
var Events = hook.Handles[hook.Detect]

// Usage prints detect's usage, for -h and --help.
func Usage(w io.Writer) {
	fmt.Fprintln(w, "usage: detect [--config FILE] [--client CLIENT] [--event EVENT]")
	fmt.Fprintln(w, "detect is a hook: it reads one hook input object on stdin (registered by gate init)")
	fmt.Fprintln(w, "  --version  the stopgate version and commit it was built from")
}

// Run is the detect command.
func Run(env *cli.Env) error {
	fl := flag.NewFlagSet("detect", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	configFile := fl.String("config", "", "mappings file (default <root>/mappings.toml)")
	opt := client.Flags(fl, env.Getenv)
	if err := fl.Parse(env.Args); err != nil {
		return err
	}
	in, ans, err := client.Decode(env.Stdin, env.Stdout, *opt, Events...)
	if errors.Is(err, client.ErrIgnored) {
		return nil
	}
	if err != nil {
		return err
	}
	root := project.Root(env.Getenv, in.Cwd, env.Dir)
	if ev := in.HookEventName; ev == hook.PreToolUse || ev == hook.PreSkillShellCommand { // a skill's command: its skill is armed too, unannounced
		if err := guardTool(env, in, ans, root, *configFile); err != nil || ev == hook.PreToolUse {
			return err
		}
	}
	return armFrom(env, in, ans, root, *configFile)
}

// armFrom arms the mappings the input triggers: a prompt read, a slash command or skill run.
func armFrom(env *cli.Env, in *hook.Input, ans hook.Answer, root, configFile string) error {
	// Cheap tests first: an unrelated tool call or prompt never loads the config.
	kind, command, reads := triggersOf(in, root, env.Getenv("HOME"))
	if kind == "" || kind == queue.TriggerRead && len(reads) == 0 {
		return nil
	}
	// From the cache when it is current: this runs on every read of a .md file.
	cfg, err := config.Load(config.Path(root, configFile, env.Dir), root)
	if err != nil {
		if config.Missing(configFile, err) {
			return nil // not a stopgate project: nothing is mapped
		}
		return err
	}
	var maps []*config.Mapping
	var paths []string // the file read that armed each mapping ("" for a command)
	if kind != queue.TriggerRead {
		maps, err = cfg.MatchCommand(command)
		paths = make([]string, len(maps))
	}
	for _, r := range reads {
		if err = cfg.Judge(&r); err != nil {
			break
		}
		for _, m := range r.Maps {
			maps, paths = append(maps, m), append(paths, r.Path)
		}
	}
	if err != nil || len(maps) == 0 {
		return err
	}
	return arm(env, in, ans, root, cfg, maps, paths, kind)
}

// arm queues an entry per mapping, with what takes its baseline, and announces the new ones; an entry
// that cannot be written does not stop the others, and every failure is reported.
func arm(env *cli.Env, in *hook.Input, ans hook.Answer, root string, cfg *config.Config, maps []*config.Mapping, paths []string, kind string) error {
	q := queue.Open(cfg.StateDir())
	errs := &multierror.Error{ErrorFormat: func(es []error) string { // one line, "; " between
		msgs := make([]string, len(es))
		for i, err := range es {
			msgs[i] = err.Error()
		}
		return strings.Join(msgs, "; ")
	}}
	var armed []*config.Mapping
	validator := memo(cfg.Validator)
	for i, m := range maps {
		inputs, err := config.InputsOf(root, cfg.File, cfg.Key(), m, validator)
		if err != nil {
			return err
		}
		want, err := config.WantOf(m, validator)
		if err != nil {
			return err
		}
		want.Tree = true
		record := func(path string) error { // without fsync: one a crash cuts short is no record, never a pass
			data, err := json.Marshal(baseline.Take(root, want, []string{cfg.StateDir()}))
			if err != nil {
				return err
			}
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return err
			}
			_, err = f.Write(data)
			return errors.Join(err, f.Close())
		}
		created, err := q.Enqueue(queue.Entry{
			Prompt: m.Prompt, Session: in.SessionID, AgentID: in.AgentID, AgentType: in.AgentType,
			Path: paths[i], Trigger: kind, Line: m.Line, Inputs: inputs,
		}, record)
		if err != nil {
			errs = multierror.Append(errs, fmt.Errorf("arming %q: %w", m.Prompt, err))
		}
		if created {
			armed = append(armed, m)
		}
	}
	if err := errs.ErrorOrNil(); err != nil {
		return err
	}
	if len(armed) > 0 {
		trust.Mark(in.TranscriptPath, root)
	}
	if !cfg.Settings.Announce || len(armed) == 0 || in.HookEventName == hook.PreSkillShellCommand {
		return nil
	}
	text, err := Announcement(validator, armed) // the lookups arming made
	if err != nil {
		return err
	}
	return ans.Write(hook.Context(in.HookEventName, text))
}

// triggersOf returns what the input arms and its kind (a queue.Trigger*; "": nothing): the
// mapped-looking files a tool call read (several for a shell command), or a slash command.
func triggersOf(in *hook.Input, root, home string) (kind, command string, reads []config.Read) {
	named := func(kind, name string) (string, string, []config.Read) {
		if name = strings.TrimPrefix(name, "/"); name == "" {
			return "", "", nil
		}
		return kind, name, nil
	}
	switch in.HookEventName {
	case hook.PostToolUse:
		if in.ToolName == "Skill" { // the model ran a slash command itself: no Read or expansion follows
			return named(queue.TriggerSkill, in.Tool.Skill)
		}
		paths := in.ReadPaths()
		if in.ToolName == "Bash" && in.Tool.Command != "" { // what the guard's dry run of it reads
			cwd := cmp.Or(in.Cwd, root)
			if cs := in.GuardCalls(); len(cs) == 1 && cs[0].Cwd != "" {
				cwd = cs[0].Cwd // Gemini's dir_path
			}
			// PostToolUse names the directory a command ended in: ShellReads tries root too.
			paths = guard.ShellReads(in.Tool.Command, cwd, root, home)
		}
		for _, path := range paths {
			if r, ok := config.ReadOf(root, path); ok {
				reads = append(reads, r)
			}
		}
		return queue.TriggerRead, "", reads
	case hook.UserPromptExpansion:
		if (in.ExpansionType == "" || in.ExpansionType == "slash_command") && in.CommandName != "" {
			return queue.TriggerCommand, strings.TrimPrefix(in.CommandName, "/"), nil
		}
	case hook.PreSkillShellCommand: // invoked by claude: the model ran it, as through the Skill tool
		return named(map[bool]string{true: queue.TriggerSkill, false: queue.TriggerCommand}[in.InvokedBy == "claude"], in.CommandName)
	case hook.UserPromptSubmit:
		if name := hook.SlashCommand(in.Prompt); name != "" {
			return queue.TriggerPrompt, name, nil
		}
	}
	return "", "", nil
}

// Announcement tells the agent what will be checked before it may stop (fewer blocked stops).
func Announcement(validator func(string) (*config.Validator, error), maps []*config.Mapping) (string, error) {
	var b strings.Builder
	for _, m := range maps {
		fmt.Fprintf(&b, "stopgate: before you stop, the prompt %q will be checked:\n", m.Prompt)
		for _, name := range m.Validators {
			v, err := validator(name)
			if err != nil {
				return "", err
			}
			if v == nil {
				continue // cannot happen in a config that loaded
			}
			what := cmp.Or(v.Fix, v.Expects()) // its fix, else what it checks
			if v.Fix == "" && v.Run != "" {
				what = fmt.Sprintf("the check `%s` must pass", v.Run)
			}
			fmt.Fprintf(&b, "- %s: %s\n", name, what)
		}
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// memo remembers the validators looked up by one arming.
func memo(lookup func(string) (*config.Validator, error)) func(string) (*config.Validator, error) {
	seen := map[string]*config.Validator{}
	return func(name string) (*config.Validator, error) {
		if v, ok := seen[name]; ok {
			return v, nil
		}
		v, err := lookup(name)
		if err == nil {
			seen[name] = v
		}
		return v, err
	}
}

// guardTool is the tamper guard's answer (docs/guard.md): a call that would change the trusted base is
// denied; any other gets no output, never "allow" (it would skip the user's permission prompts). A panic denies.
func guardTool(env *cli.Env, in *hook.Input, ans hook.Answer, root, configFile string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			env.Stderr.Write(debug.Stack())
			err = ans.Write(hook.Deny(in.HookEventName, fmt.Sprintf(
				"stopgate's tamper guard could not judge this call: internal error (a bug in stopgate): %v. "+
					"It is denied; ask the user to run it if it is needed.", p)))
		}
	}()
	calls := slices.DeleteFunc(slices.Clone(in.GuardCalls()), func(c hook.Call) bool { return !guard.Guards(c.Tool) })
	if len(calls) == 0 {
		return nil
	}
	file := config.Path(root, configFile, env.Dir)
	cfg, loadErr := config.Load(file, root)
	if config.Missing(configFile, loadErr) {
		return nil // not a stopgate project: nothing to protect
	}
	// With mistakes in the config, the state dir and config are still protected; the error follows.
	base, err := trust.For(trust.Project{Root: root, Home: env.Getenv("HOME"), File: file, Config: cfg,
		Transcript: in.TranscriptPath, PluginRoot: env.Getenv("CLAUDE_PLUGIN_ROOT")})
	set := base.Guard()
	if in.Client != nil {
		name, home := in.Client.Name, env.Getenv("HOME")
		set.LoadsEnv(client.Of(in).Title, func(p string, text func() string) (string, []string) {
			if f := trust.DotEnvWrite(name, root, home, p, text); f != nil {
				return f.Show, f.Env
			}
			return "", nil
		})
	}
	loadErr = cmp.Or(loadErr, err)
	for _, c := range calls {
		cwd := cmp.Or(c.Cwd, in.Cwd, root)
		if h := set.Check(c.Tool, c.Input, cwd); h != nil {
			return ans.Write(hook.Deny(in.HookEventName, h.Reason()))
		}
	}
	return loadErr
}
