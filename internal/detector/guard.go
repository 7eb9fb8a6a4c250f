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
	calls := guardedCalls(in)
	if len(calls) == 0 {
		return nil
	}
	file := config.Path(root, configFile, env.Dir)
	src := guard.Source{
		Root: root, Home: env.Getenv("HOME"), File: file,
		StateDir: filepath.Join(root, config.DefaultStateDir),
		Commands: hookPrograms(root), Transcript: in.TranscriptPath,
	}
	cfg, loadErr := config.LoadCompiled(file, root)
	switch {
	case loadErr == nil:
		defer cfg.Close()
		src.StateDir, src.Protect = cfg.StateDir(), cfg.Settings.Protect
		if src.Protect == nil || len(src.Protect) > 0 {
			src.Runs, loadErr = guardRuns(cfg)
		}
	case configFile == "" && errors.Is(loadErr, fs.ErrNotExist):
		return nil // not a stopgate project: nothing to protect
	}
	cwd := in.Cwd
	if cwd == "" {
		cwd = root
	}
	set := guard.Defaults(src)
	for _, c := range calls {
		dir := cwd
		if c.Cwd != "" {
			dir = c.Cwd
		}
		if h := set.Check(c.Tool, c.Input, dir); h != nil {
			return hook.Write(env.Stdout, hook.Deny(h.Reason()))
		}
	}
	return loadErr
}

// guardedCalls returns the input's tool calls the guard judges: the call
// itself, or the writes a client's tool makes (package dialect).
func guardedCalls(in *hook.Input) []hook.Call {
	var out []hook.Call
	for _, c := range in.GuardCalls() {
		if guard.Guards(c.Tool) {
			out = append(out, c)
		}
	}
	return out
}

// guardRuns returns the run validators, from the one record the compiled
// config keeps of them.
func guardRuns(cfg *config.Compiled) ([]guard.Run, error) {
	vs, err := cfg.Runs()
	if err != nil {
		return nil, err
	}
	runs := make([]guard.Run, len(vs))
	for i, v := range vs {
		runs[i] = guard.Run{Name: v.Name, Command: v.Run}
	}
	return runs, nil
}

// hookPrograms returns stopgate's hook programs: those beside this one and
// those gate init registers in the project's bin/. The guard protects the
// ones inside the project.
func hookPrograms(root string) []string {
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	dirs = append(dirs, filepath.Join(root, "bin"))
	var out []string
	for _, d := range dirs {
		for _, name := range []string{"detect", "gate", "testhook"} {
			out = append(out, filepath.Join(d, name))
		}
	}
	return out
}
