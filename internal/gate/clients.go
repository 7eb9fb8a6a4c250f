package gate

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/dialect"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/settings"
)

// agentClient is an agent client other than Claude Code that `gate init
// --client NAME` registers stopgate's hooks with, in the client's own
// project file and words. Every hook command names the dialect (--client)
// and, where the input does not name it, the event (--event).
type agentClient struct {
	name   string
	title  string
	file   string // the project file the hooks go in, slash-separated
	native bool   // Copilot's native file, not Claude Code's shape
	// projectVar is the variable the client sets to the project root, which
	// hook commands start from; "": none, they name the bin dir absolute.
	projectVar string
	// unit multiplies a timeout in seconds into the file's unit.
	unit  int
	hooks []dialect.Hook // package dialect keeps each client's, beside its events
	// eventFlag: each hook command names its event (--event), which the
	// client's input does not.
	eventFlag bool
	// blockCap is the consecutive blocks after which the client lets the
	// agent stop anyway; 0: no cap, max_blocks alone ends a loop.
	blockCap int
	trust    string   // what the user must do about the client's trust gate
	limits   []string // what the client lacks that a stopgate feature needs
	plugin   bool     // registered by a plugin file, not hook entries (OpenCode)
	// The client's second wall (clientwall.go): wallOn turns it on in the
	// client's project config (nil: the client offers none a project can
	// turn on), wallUp says whether it is up, wallOff plans taking it out
	// (gate uninstall --client); wallLeft is what the guard alone stands
	// against, wall up or not.
	wallOn   func(env *cli.Env, root string, set *guard.Set) error
	wallUp   func(env *cli.Env, ws workspace, set *guard.Set) []finding
	wallOff  func(env *cli.Env, root string) (undo, error)
	wallLeft string
}

var agentClients = []*agentClient{
	{
		name: dialect.Codex, title: "Codex", file: hookFiles["Codex"], unit: 1,
		hooks:  dialect.Hooks(dialect.Codex),
		wallOn: writeCodexWall, wallUp: codexWallFindings, wallOff: undoCodexWall,
		wallLeft: "the wall is Codex's own sandbox for shell commands (bubblewrap): with the permission profile up, the protected set is read-only to every command and to apply_patch; a command or patch the user approves outside the sandbox, and a session started with --sandbox, --dangerously-bypass-approvals-and-sandbox or a sandbox_mode anywhere in Codex's config are the guard's alone",
		trust:    "Codex runs a project's hooks only once you trust them: review .codex/hooks.json and trust it when Codex asks (codex exec skips untrusted hooks silently; --dangerously-bypass-hook-trust is for throwaway sandboxes only)",
		limits: []string{
			"Codex has no read tool: detect arms the files a Bash command reads, as the guard's dry run resolves it (cat, sed -n, head, tail, nl, less, grep/rg with a file operand, < redirection; through cd, globs, variables, env, timeout, xargs, find -exec); a file read any other way (a script, python -c) does not arm",
			"Codex has no slash-command expansion event: a prompt armed by a slash command arms only when the prompt starts with it",
		},
	},
	{
		name: dialect.Gemini, title: "Gemini CLI", file: hookFiles["Gemini CLI"], unit: 1000,
		projectVar: "GEMINI_PROJECT_DIR",
		hooks:      dialect.Hooks(dialect.Gemini),
		wallLeft:   "no wall gate init can turn on: Gemini CLI's sandbox runs the whole session in docker or podman (or Seatbelt on macOS) and is chosen by the user (--sandbox, GEMINI_SANDBOX); the guard alone refuses a write to the protected set",
		trust:      "Gemini CLI runs project hooks only in a trusted folder: trust it when Gemini asks (headless runs: set GEMINI_CLI_TRUST_WORKSPACE=true; --skip-trust runs the folder untrusted, with project hooks off)",
		limits: []string{
			"Gemini CLI subagents fire no hooks: a subagent's reads do not arm and its end is not gated; the main agent's AfterAgent is",
			"Gemini CLI has no block cap, but after 30 turns its loop detector may end a session; max_blocks ends a failing loop first",
			"read_many_files arms the files it names and simple globs; a directory or a ** glob is not expanded",
			"Gemini CLI expands a custom command (.gemini/commands) before BeforeAgent: the hook sees its text, not its name, so a custom command does not arm a mapping; a read of the prompt file does",
		},
	},
	{
		name: dialect.Copilot, title: "Copilot CLI", file: hookFiles["Copilot CLI"], unit: 1, native: true,
		projectVar: "COPILOT_PROJECT_DIR",
		hooks:      dialect.Hooks(dialect.Copilot),
		eventFlag:  true,
		blockCap:   8,
		wallLeft:   "no wall gate init can turn on: Copilot CLI's command sandbox (MXC, bubblewrap plus slirp4netns on Linux) is switched on and given its paths in the user's own settings or with --sandbox, not in the project; the guard alone refuses a write to the protected set",
		trust:      "Copilot CLI runs a repository's hooks only in a trusted folder: trust it when Copilot asks (copilot -p needs --trust-folder)",
		limits: []string{
			"Copilot CLI lets the agent stop after 8 consecutive blocks: keep max_blocks below 8",
			"Copilot CLI ignores exit code 2: stopgate answers with JSON only",
			"a subagent's agentStop (it has parentAgentId) is not answered: Copilot ignores a block there; the subagent is gated at subagentStop",
		},
	},
	{
		name: dialect.OpenCode, title: "OpenCode", file: opencodeFile, unit: 1, plugin: true,
		wallOn: writeOpenCodeWall, wallUp: opencodeWallFindings, wallOff: undoOpenCodeWall,
		wallLeft: "the wall is OpenCode's permission rules in opencode.json: with them up, the write, edit and patch tools are refused the protected set; OpenCode has no sandbox for the shell, so every bash command, and a rule the user answers \"allow\" or edits away, are the guard's alone (the plugin's tool.execute.before)",
		trust:    "OpenCode loads a project's plugins without asking: the plugin gates sessions that stay alive (opencode serve, the TUI); opencode run exits at idle, before a block can send the agent back",
		limits: []string{
			"OpenCode has no command hooks: the plugin in .opencode/plugin/stopgate.js runs detect and gate; session.idle cannot refuse a stop, so a block is sent back as the session's next prompt",
			"OpenCode has no stop_hook_active: the plugin counts its own continuations; max_blocks ends a failing loop",
			"opencode run exits when the session goes idle: use opencode serve or the TUI",
		},
	},
}

// clientNamed returns the client registered by `--client name`, nil for
// Claude Code, or an error naming the choices.
func clientNamed(name string) (*agentClient, error) {
	if name == "" || name == dialect.Claude {
		return nil, nil
	}
	for _, c := range agentClients {
		if c.name == name {
			return c, nil
		}
	}
	return nil, fmt.Errorf("unknown client %q, want one of %v", name, dialect.Names)
}

// wanted returns the hooks to register, each a launcher (launch) of its
// program under bin, timeouts in the file's unit; without testhook, its
// hooks are left out.
func (c *agentClient) wanted(root, bin string, testhook bool) []settings.Hook {
	prefix, dir := varBin(c.projectVar, root, bin)
	in := binInstall(root, bin)
	var out []settings.Hook
	for _, h := range c.hooks {
		if h.Program == hook.Testhook && !testhook {
			continue
		}
		cmd := launch(c.name, h.Event, prefix+"/"+h.Program, c.args(h), in, project.Display(root, filepath.Join(dir, h.Program)))
		out = append(out, settings.Hook{Event: h.Event, Matcher: h.Matcher, Command: cmd, Timeout: h.Timeout * c.unit})
	}
	return out
}

// args are the arguments the hook command of h passes its program.
func (c *agentClient) args(h dialect.Hook) string {
	args := strings.TrimSpace(timeoutFlag(h) + " --client " + c.name)
	if c.eventFlag {
		args += " --event " + h.Event
	}
	return args
}

// owned returns every hook entry gate init writes or wrote for bin: the
// launchers, and the plain paths older gate inits wrote.
func (c *agentClient) owned(root, bin string) []settings.Hook {
	prefix, _ := varBin(c.projectVar, root, bin)
	out := c.wanted(root, bin, true)
	for i, h := range c.hooks {
		old := out[i]
		old.Command = prefix + "/" + h.Program + " " + c.args(h)
		out = append(out, old)
	}
	return out
}

// initClient is `gate init --client NAME`: the hooks merged into the
// client's own file (as carefully as .claude/settings.json: untouched
// bytes kept, a second run changes nothing, a broken file refused with its
// line and column), the starter mappings.toml, the state dir's .gitignore
// line, and what the user must do about the client's trust gate.
func initClient(env *cli.Env, c *agentClient, bin string, testhook bool) error {
	root := project.Root(env.Getenv, "", env.Dir)
	var want []settings.Hook // the plugin registers no hook entries
	if c.plugin {
		if err := opencodeReadable(root); err != nil {
			return err // before anything is written
		}
		if err := initOpenCode(env, root, bin, binInstall(root, bin)); err != nil {
			return err
		}
	} else {
		want = c.wanted(root, bin, testhook)
		merge, initial := settings.Merge, []byte(nil)
		if c.native {
			merge, initial = mergeCopilot, []byte(copilotNew)
		}
		unit := map[int]string{1: "s", 1000: "ms"}[c.unit]
		if err := register(env, guard.SettingsFile{Path: filepath.Join(root, filepath.FromSlash(c.file)), Name: c.file}, want, initial, merge, unit, nil); err != nil {
			return err
		}
	}
	if err := writeStarter(env, root); err != nil {
		return err
	}
	if err := writeIgnore(env, root); err != nil {
		return err
	}
	noteMissing(env, absFrom(root, bin), want, root, binInstall(root, bin))
	if err := initClientWall(env, c, root); err != nil { // clientwall.go
		return err
	}
	label := "trust"
	if c.plugin {
		label = "note"
	}
	fmt.Fprintf(env.Stdout, "%s: %s\n", label, c.trust)
	return nil
}

// lookup reads the client's file: Claude Code's shape (package settings),
// or Copilot CLI's own.
func (c *agentClient) lookup(data []byte, want []settings.Hook) ([]settings.Found, error) {
	if !c.native {
		return settings.Lookup(data, want)
	}
	f, err := parseCopilot(data)
	if err != nil {
		return nil, err
	}
	return f.lookup(want), nil
}
