// Package testhook is the test runner behind cmd/testhook: a tests file's
// actions are handed to the agent one by one, each answer is checked with the
// gate's validator engine, values saved from one answer feed later tests as
// ${name}, and a report comes out. It is a command line and a UserPromptSubmit
// and Stop hook; docs/testhook.md is its contract, testhook_*.txtar its tests.
// Runs live in the state dir, one per session, under the queue's lock (Store).
package testhook

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/client"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
)

// TerminalSession is the session of a run started on the command line
// without --session or $STOPGATE_SESSION_ID.
const TerminalSession = "terminal"

var usage = []string{
	"usage: testhook [--session ID] [--config FILE] COMMAND",
	"commands: init [--category C] [--tag T] [--file F] [--auto], next (n), validate (v) [TEXT|-],",
	"          skip (s), retry [ID], status, report [--junit F] [--markdown F], vars, abort (a)",
	"with no command, testhook is a UserPromptSubmit and Stop hook reading its input on stdin",
}

// Run is the testhook command.
func Run(env *cli.Env) error {
	var session, configFile string
	fl := flag.NewFlagSet("testhook", flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	fl.StringVar(&session, "session", "", "")
	fl.StringVar(&configFile, "config", "", "")
	opt := client.Flags(fl, env.Getenv)
	if err := fl.Parse(env.Args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err // cli prints Usage
		}
		return usageErr(err)
	}
	args := fl.Args()
	if len(args) == 0 {
		if cli.IsTerminal(env.Stdin) {
			return usageErr(errors.New("no command, and stdin is a terminal, not hook input"))
		}
		return runHook(env, configFile, *opt)
	}
	if args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		Usage(env.Stdout)
		return nil
	}
	name, ok := aliases[args[0]]
	if !ok {
		return usageErr(fmt.Errorf("unknown command %q", args[0]))
	}
	req, err := parseRequest(name, args[1:], &session, &configFile)
	if err != nil {
		return usageErr(err)
	}
	if name == "validate" {
		req.text, req.hasText = strings.Join(req.args, " "), len(req.args) > 0
		if req.text == "-" {
			data, err := io.ReadAll(env.Stdin)
			if err != nil {
				return fmt.Errorf("reading the answer from stdin: %w", err)
			}
			req.text = string(data)
		}
	}

	r, err := newRunner(env, configFile, "")
	if err != nil {
		return err
	}
	if err := r.pickSession(session, name == "init"); err != nil {
		return err
	}
	rep, err := r.do(req)
	if err != nil {
		if errors.As(err, new(usageError)) {
			return usageErr(err)
		}
		return err
	}
	fmt.Fprintln(env.Stdout, rep.text)
	if rep.failed > 0 {
		return fmt.Errorf("%d of %d tests failed", rep.failed, rep.total)
	}
	return nil
}

// Usage prints testhook's usage, for help, -h and --help.
func Usage(w io.Writer) {
	fmt.Fprintln(w, strings.Join(usage, "\n"))
}

func usageErr(err error) error {
	return &cli.ExitError{Code: 2, Err: cli.WithHint(err, usage...)}
}

// runner is one invocation: the project, whose run it acts on, and how.
type runner struct {
	env      *cli.Env
	answer   hook.Answer // to the hook input, when run as a hook
	root     string
	store    *Store // the runs of the project's state dir
	session  string
	hook     bool   // answering a hook: the user types "next", not "testhook next"
	turn     string // the hook input's prompt_id, if any
	blockCap int
	now      func() time.Time
	seen     *State // the run as just read, for the next load only
}

// newRunner finds the project root (cwd is the hook input's) and state dir.
func newRunner(env *cli.Env, configFile, cwd string) (*runner, error) {
	root := project.Root(env.Getenv, cwd, env.Dir)
	sd, err := stateDir(root, configFile, env.Dir)
	if err != nil {
		return nil, err
	}
	return &runner{env: env, root: root, store: &Store{dir: sd}, blockCap: config.BlockCap(env.Getenv), now: func() time.Time { return time.Now().UTC() }}, nil
}

// stateDir returns the state dir mappings.toml names, or the default
// without one. A config whose state dir cannot be read stops a run (it
// would be stored where the gate does not look); other mistakes are the gate's.
func stateDir(root, configFile, dir string) (string, error) {
	sd, err := config.ReadStateDir(config.Path(root, configFile, dir), root)
	if err != nil && !(configFile == "" && errors.Is(err, fs.ErrNotExist)) {
		return "", err
	}
	return sd, nil
}

// pickSession chooses a command line's run: --session, else
// $STOPGATE_SESSION_ID, else the only run; init starts the terminal's own.
func (r *runner) pickSession(flagged string, starting bool) error {
	r.session = cmp.Or(flagged, r.env.Getenv("STOPGATE_SESSION_ID"))
	if r.session != "" {
		return nil
	}
	if starting {
		r.session = TerminalSession
		return nil
	}
	ss, err := sessions(r.store.dir)
	if err != nil {
		return err
	}
	switch len(ss) {
	case 0:
		return errNoRun
	case 1:
		r.session = ss[0]
		return nil
	}
	return cli.WithHint(fmt.Errorf("%d sessions have a run: %s", len(ss), strings.Join(ss, ", ")),
		"pick one with --session ID")
}

var errNoRun = cli.WithHint(errors.New("no test run"), "start one with testhook init, or /run-tests in Claude Code")

// word is how the person invokes a command here.
func (r *runner) word(cmd string) string {
	if r.hook {
		return cmd
	}
	return "testhook " + cmd
}

// path makes a person's path absolute: relative to the working directory
// on the command line, to the project root in a hook.
func (r *runner) path(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	if r.hook || r.env.Dir == "" {
		return filepath.Join(r.root, p)
	}
	return filepath.Join(r.env.Dir, p)
}

// rootPath makes a path kept relative to the root absolute.
func (r *runner) rootPath(p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(r.root, filepath.FromSlash(p))
}

// do runs one command.
func (r *runner) do(req request) (reply, error) {
	switch req.name {
	case "init":
		return r.start(req)
	case "next":
		return r.next()
	case "validate", "skip":
		return r.record(req)
	case "retry":
		return r.retry(req.args)
	case "status":
		return r.show(r.statusText)
	case "report":
		return r.report(req)
	case "vars":
		return r.show(varsText)
	case "abort":
		return r.abort()
	}
	return reply{}, usageError("unknown command " + req.name)
}

// reply is a command's answer.
type reply struct {
	text    string // for the person: stdout, or the hook's block reason
	context string // for the agent: additionalContext of next, or of an auto run's first test
	failed  int    // report: failed tests, for the exit code
	total   int
}

// The commands, by canonical name, and the short forms that stand for them.
var aliases = map[string]string{
	"init": "init", "next": "next", "n": "next", "validate": "validate", "v": "validate",
	"skip": "skip", "s": "skip", "retry": "retry", "status": "status", "report": "report",
	"vars": "vars", "abort": "abort", "a": "abort",
}

// request is one command, from the command line or a prompt, with every
// command's flags; each command accepts only its own.
type request struct {
	name       string   // canonical
	slash      bool     // /run-tests, typed in Claude Code
	args       []string // positional
	text       string   // validate's answer
	hasText    bool     // false: use the agent's last answer
	file       string
	auto       bool
	categories list
	tags       list
	junit      string
	markdown   string
}

// list is a repeatable flag; each value may also be comma-separated.
type list []string

func (l *list) String() string { return strings.Join(*l, ",") }
func (l *list) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" && !slices.Contains(*l, p) {
			*l = append(*l, p)
		}
	}
	return nil
}

// usageError is a mistake in how a command was written: exit 2.
type usageError string

func (e usageError) Error() string { return string(e) }

// parseRequest parses name's flags and arguments; session and config, when
// not nil, are bound to --session and --config (the command line's).
func parseRequest(name string, args []string, session, config *string) (request, error) {
	req := request{name: name}
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	if session != nil {
		fl.StringVar(session, "session", *session, "")
		fl.StringVar(config, "config", *config, "")
	}
	maxArgs := 0
	switch name {
	case "init":
		fl.StringVar(&req.file, "file", "", "")
		fl.BoolVar(&req.auto, "auto", false, "")
		fl.Var(&req.categories, "category", "")
		fl.Var(&req.tags, "tag", "")
	case "report":
		fl.StringVar(&req.junit, "junit", "", "")
		fl.StringVar(&req.markdown, "markdown", "", "")
	case "retry":
		maxArgs = 1
	case "validate":
		maxArgs = -1
	}
	// Flags may follow positional arguments too: "retry login --session s".
	pos, err := cli.Parse(fl, args)
	if err != nil {
		return req, usageError(name + ": " + err.Error())
	}
	if maxArgs >= 0 && len(pos) > maxArgs {
		if maxArgs == 0 {
			return req, usageError(name + " takes no arguments, got " + strings.Join(pos, " "))
		}
		return req, usageError(name + " takes at most one test id, got " + strings.Join(pos, " "))
	}
	req.args = pos
	return req, nil
}

// SlashCommand is the slash command that starts a run from Claude Code.
const SlashCommand = "/run-tests"

// parsePrompt reads a prompt as a runner command; ok is false for anything
// else, which is the agent's: the whole prompt must be the command ("skip
// the tests" is not). /run-tests is always the runner's, its mistakes err.
func parsePrompt(prompt string) (req request, ok bool, err error) {
	p := strings.TrimSpace(prompt)
	word, rest := cutWord(p)
	if word == SlashCommand {
		req, err := parseRequest("init", strings.Fields(rest), nil, nil)
		if err != nil {
			return request{}, true, usageError(SlashCommand + strings.TrimPrefix(err.Error(), "init"))
		}
		req.slash = true
		return req, true, nil
	}
	name, known := aliases[strings.ToLower(word)]
	if !known || name == "init" {
		return request{}, false, nil
	}
	if name == "validate" {
		text := strings.TrimSpace(rest)
		return request{name: name, text: text, hasText: text != ""}, true, nil
	}
	req, err = parseRequest(name, strings.Fields(rest), nil, nil)
	if err != nil {
		return request{}, false, nil // "report the bug": not ours
	}
	return req, true, nil
}

// cutWord splits s at its first run of white space.
func cutWord(s string) (word, rest string) {
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	return s[:i], strings.TrimLeftFunc(s[i:], unicode.IsSpace)
}
