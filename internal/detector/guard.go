package detector

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
)

// guardTool is detect's PreToolUse answer, the tamper guard (package
// guard): a Write, Edit, MultiEdit, NotebookEdit or Bash call that would
// change the state dir, the config or a validator is denied with a reason;
// any other call gets no output at all. Never "allow": that would skip the
// user's own permission prompts for the call.
//
//	other tools                     exit 0, no output, nothing loaded
//	a protected path                {"hookSpecificOutput":{"hookEventName":"PreToolUse",
//	                                 "permissionDecision":"deny","permissionDecisionReason":…}}
//	anything else                   exit 0, no output
//	no mappings.toml                exit 0, no output: not a stopgate project
//	mappings.toml with mistakes     the state dir and the config file are still
//	                                protected; otherwise one line on stderr, exit 1
func guardTool(env *cli.Env, in *hook.Input, root, configFile string) error {
	if !guard.Guards(in.ToolName) {
		return nil
	}
	file := config.Path(root, configFile, env.Dir)
	src := guard.Source{
		Root: root, Home: env.Getenv("HOME"), File: file,
		StateDir: filepath.Join(root, config.DefaultStateDir),
		Commands: hookPrograms(),
	}
	cfg, loadErr := config.Load(file, root)
	switch {
	case loadErr == nil:
		src.StateDir, src.Protect = cfg.StateDir(), cfg.Settings.Protect
		for _, name := range cfg.Order {
			if v := cfg.Validators[name]; v.Run != "" {
				src.Runs = append(src.Runs, guard.Run{Name: name, Command: v.Run})
			}
		}
	case configFile == "" && errors.Is(loadErr, fs.ErrNotExist):
		return nil // not a stopgate project: nothing to protect
	}
	cwd := in.Cwd
	if cwd == "" {
		cwd = root
	}
	if h := guard.Defaults(src).Check(in.ToolName, in.ToolInput, cwd); h != nil {
		return hook.Write(env.Stdout, hook.Deny(h.Reason()))
	}
	return loadErr
}

// hookPrograms returns stopgate's hook programs beside this one: the guard
// protects them when they live in the project (bin/detect, bin/gate).
func hookPrograms() []string {
	exe, err := os.Executable()
	if err != nil {
		return nil
	}
	dir := filepath.Dir(exe)
	return []string{exe, filepath.Join(dir, "detect"), filepath.Join(dir, "gate")}
}
