// Package testhook is the test runner behind cmd/testhook, a command line and a UserPromptSubmit and
// Stop hook that hands a tests file's actions to the agent and checks each answer (docs/testhook.md).
package testhook

import (
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
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
	"github.com/stopgate/stopgate/internal/queue"
)

// TerminalSession is a command-line run's session without --session or $STOPGATE_SESSION_ID.
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
	err := fl.Parse(env.Args)
	args := fl.Args()
	switch {
	case errors.Is(err, flag.ErrHelp):
		return err // cli prints Usage
	case err != nil:
		return usageErr(err)
	case len(args) == 0 && cli.IsTerminal(env.Stdin):
		return usageErr(errors.New("no command, and stdin is a terminal, not hook input"))
	case len(args) == 0:
		return runHook(env, configFile, *opt)
	case slices.Contains([]string{"help", "-h", "--help"}, args[0]):
		return flag.ErrHelp
	}
	req, err := parseRequest(args[0], args[1:], &session, &configFile)
	if err != nil {
		return usageErr(err)
	}
	if req.name == "validate" && req.text == "-" {
		data, err := io.ReadAll(env.Stdin)
		if err != nil {
			return fmt.Errorf("reading the answer from stdin: %w", err)
		}
		req.text = string(data)
	}
	var rep reply
	r, err := newRunner(env, configFile, "")
	if err == nil {
		err = r.pickSession(session, req.name == "init")
	}
	if err == nil {
		rep, err = commands[req.name](r, req)
	}
	if errors.As(err, new(usageError)) {
		return usageErr(err)
	} else if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, rep.text)
	return rep.exit
}

// Usage prints testhook's usage, for help, -h and --help.
func Usage(w io.Writer) { fmt.Fprintln(w, strings.Join(usage, "\n")) }

func usageErr(err error) error { return &cli.ExitError{Code: 2, Err: cli.WithHint(err, usage...)} }

// runner is one invocation: the project, whose run it acts on, and how.
type runner struct {
	env      *cli.Env
	answer   hook.Answer // to the hook input, when run as a hook
	root     string
	dir      string // the state dir, where the runs are
	session  string
	hook     bool   // answering a hook: the user types "next", not "testhook next"
	turn     string // the hook input's prompt_id, if any
	blockCap int    // the client's cap on blocked stops in a row: the tests an auto turn holds
}

func utcNow() time.Time { return time.Now().UTC() }

// newRunner finds the root (cwd: the hook input's) and state dir; an unreadable mappings.toml stops it.
func newRunner(env *cli.Env, configFile, cwd string) (*runner, error) {
	root := project.Root(env.Getenv, cwd, env.Dir)
	sd, err := config.ReadStateDir(config.Path(root, configFile, env.Dir), root)
	if err != nil && !config.Missing(configFile, err) {
		return nil, err
	}
	return &runner{env: env, root: root, dir: sd, blockCap: config.BlockCap(env.Getenv)}, nil
}

// pickSession chooses --session, else $STOPGATE_SESSION_ID, else the only run; init starts the terminal's.
func (r *runner) pickSession(flagged string, starting bool) error {
	if r.session = cmp.Or(flagged, r.env.Getenv("STOPGATE_SESSION_ID")); r.session != "" || starting {
		r.session = cmp.Or(r.session, TerminalSession)
		return nil
	}
	des, err := os.ReadDir(filepath.Join(r.dir, "runs"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	var ss []string // the sessions with a run
	for _, de := range des {
		if _, err := os.Stat(filepath.Join(r.dir, "runs", de.Name(), "run.json")); err == nil {
			ss = append(ss, queue.Unsegment(de.Name()))
		}
	}
	slices.Sort(ss)
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

// word is how the person invokes a command here (init, in a client, is the slash command).
func (r *runner) word(cmd string) string {
	switch {
	case r.hook && cmd == "init":
		return SlashCommand
	case r.hook:
		return cmd
	}
	return "testhook " + cmd
}

// path makes a person's path absolute: relative to the working directory, or to the root in a hook.
func (r *runner) path(p string) string {
	if !filepath.IsAbs(p) && !r.hook && r.env.Dir != "" {
		return filepath.Join(r.env.Dir, p)
	}
	return r.rootPath(p)
}

// rootPath makes a path kept relative to the root absolute.
func (r *runner) rootPath(p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(r.root, filepath.FromSlash(p))
}

// commands are the runner's commands, by canonical name; shortForms name some of them.
var commands = map[string]func(*runner, request) (reply, error){
	"init": (*runner).start, "next": (*runner).next, "validate": (*runner).record, "skip": (*runner).record,
	"retry": (*runner).retry, "status": (*runner).show, "report": (*runner).report,
	"vars": (*runner).show, "abort": (*runner).abort,
}

var shortForms = map[string]string{"n": "next", "v": "validate", "s": "skip", "a": "abort"}

// reply is a command's answer.
type reply struct {
	text    string // for the person: stdout, or the hook's block reason
	context string // for the agent: additionalContext of next, or of an auto run's first test
	exit    error  // report: its failed tests, for the command line's exit code
}

// request is one command, from the command line or a prompt.
type request struct {
	name     string   // canonical
	args     []string // positional
	text     string   // validate's answer: the arguments joined
	hasText  bool     // false: use the agent's last answer
	file     string
	auto     bool
	filters  Filters
	junit    string
	markdown string
}

// appendTo is a repeatable flag's setter: each value, comma-separated, once.
func appendTo(l *[]string) func(string) error {
	return func(v string) error {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" && !slices.Contains(*l, p) {
				*l = append(*l, p)
			}
		}
		return nil
	}
}

// usageError is a mistake in how a command was written: exit 2.
type usageError struct{ error }

// parseRequest parses command word's flags and arguments; session and config, if not nil, bind those flags.
func parseRequest(word string, args []string, session, config *string) (request, error) {
	name := cmp.Or(shortForms[word], word)
	req := request{name: name}
	if commands[name] == nil {
		return req, usageError{fmt.Errorf("unknown command %q", word)}
	}
	fl := flag.NewFlagSet(name, flag.ContinueOnError)
	fl.SetOutput(io.Discard)
	if session != nil {
		fl.StringVar(session, "session", *session, "")
		fl.StringVar(config, "config", *config, "")
	}
	switch name {
	case "init":
		fl.StringVar(&req.file, "file", "", "")
		fl.BoolVar(&req.auto, "auto", false, "")
		fl.Func("category", "", appendTo(&req.filters.Categories))
		fl.Func("tag", "", appendTo(&req.filters.Tags))
	case "report":
		fl.StringVar(&req.junit, "junit", "", "")
		fl.StringVar(&req.markdown, "markdown", "", "")
	}
	maxArgs := map[string]int{"retry": 1, "validate": -1}[name]
	pos, err := cli.Parse(fl, args)
	switch {
	case err != nil:
		return req, usageError{fmt.Errorf("%s: %w", name, err)}
	case maxArgs == 0 && len(pos) > 0:
		return req, usageError{errors.New(name + " takes no arguments, got " + strings.Join(pos, " "))}
	case maxArgs == 1 && len(pos) > 1:
		return req, usageError{errors.New(name + " takes at most one test id, got " + strings.Join(pos, " "))}
	}
	req.args, req.text, req.hasText = pos, strings.Join(pos, " "), len(pos) > 0
	return req, nil
}

// SlashCommand is the slash command that starts a run from Claude Code.
const SlashCommand = "/run-tests"

// parsePrompt reads a whole prompt as a runner command ("skip the tests": ok false); /run-tests is always one.
func parsePrompt(prompt string) (req request, ok bool, err error) {
	p := strings.TrimSpace(prompt)
	i := strings.IndexFunc(p, unicode.IsSpace)
	if i < 0 {
		i = len(p)
	}
	word, rest := strings.ToLower(p[:i]), strings.TrimSpace(p[i:])
	if p[:i] == SlashCommand {
		req, err := parseRequest("init", strings.Fields(rest), nil, nil)
		if err != nil {
			return request{}, true, usageError{errors.New(SlashCommand + strings.TrimPrefix(err.Error(), "init"))}
		}
		return req, true, nil // name "init" only here: /run-tests, typed in Claude Code
	}
	switch cmp.Or(shortForms[word], word) {
	case "init":
		return request{}, false, nil
	case "validate":
		return request{name: "validate", text: rest, hasText: rest != ""}, true, nil
	}
	req, err = parseRequest(word, strings.Fields(rest), nil, nil)
	return req, err == nil, nil // a mistake ("report the bug") is not ours
}

// Events are the hook events testhook handles (hook.Handles).
var Events = hook.Handles[hook.Testhook]

// runHook answers a hook input; it leaves any prompt not the runner's alone before touching the disk.
func runHook(env *cli.Env, configFile string, opt client.Options) error {
	// Read here, not by client.Decode: the turn's id is read from the bytes too.
	data, err := client.Read(env.Stdin)
	if err != nil {
		return err
	}
	in, err := client.Parse(data, opt, Events...)
	if errors.Is(err, client.ErrIgnored) {
		return nil
	} else if err != nil {
		return err
	}
	ans := hook.AnswerTo(env.Stdout, in)
	var req request
	var perr error
	ok := in.HookEventName == hook.Stop
	if in.HookEventName == hook.UserPromptSubmit {
		req, ok, perr = parsePrompt(in.Prompt)
	}
	if !ok {
		return nil // a subagent's stop, or a prompt for the agent
	}
	r, err := newRunner(env, configFile, in.Cwd)
	if err != nil && req.name == "init" {
		return ans.Write(hook.Block("testhook: " + err.Error()))
	} else if err != nil {
		return err
	}
	var turn struct { // prompt_id (Codex: turn_id), the same for a prompt and its turn's stops
		PromptID string `json:"prompt_id"`
		TurnID   string `json:"turn_id"`
	}
	json.Unmarshal(data, &turn)
	r.session, r.hook, r.turn, r.answer = in.SessionID, true, cmp.Or(turn.PromptID, turn.TurnID), ans
	if in.HookEventName == hook.Stop {
		return r.stopHook(in)
	}
	if perr != nil {
		return r.answer.Write(hook.Block("testhook: " + perr.Error() + "\nusage: " + SlashCommand + " [--category C] [--tag T] [--file F] [--auto]"))
	}
	lead := "cannot start the run"
	if req.name != "init" {
		st, err := loadRun(runFile(r.dir, r.session))
		if err != nil || st == nil || !applies(st, req) {
			return err
		}
		lead = ""
	}
	rep, err := commands[req.name](r, req)
	if err != nil {
		return r.answer.Write(hook.Block(errText(lead, err)))
	}
	if rep.context == "" {
		return r.answer.Write(hook.Block(rep.text))
	}
	// The agent gets the test; /run-tests --auto also tells the person.
	out := hook.Context(hook.UserPromptSubmit, rep.context)
	if req.name == "init" {
		out.SystemMessage = rep.text
	}
	return r.answer.Write(out)
}

// applies says whether a typed word is the runner's: any while the run runs; after, those that look, and retry.
func applies(st *State, req request) bool {
	if req.name == "retry" && len(req.args) == 1 && st.index(req.args[0]) < 0 {
		return false // "retry parsing": not a test of this run
	}
	looks := req.name == "status" || req.name == "report" || req.name == "vars"
	switch st.Mode {
	case Running:
		return true
	case Completed:
		return looks || req.name == "retry" && (len(req.args) == 1 || st.lastRetryable() >= 0)
	}
	return looks
}

// stopHook takes a main-thread Stop; once the session has a run, every error halts it (fail closed).
func (r *runner) stopHook(in *hook.Input) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("internal error (a bug in stopgate): %v", p)
		}
		if err != nil { // halt rather than lose the run's answer
			fmt.Fprintf(r.env.Stderr, "testhook: %v\n", err)
			err = r.answer.Write(hook.Halt(errText("the test run under way could not record this stop", err) +
				"\nFix the cause (the state dir must be readable and writable; its lock free), then continue the session: the run goes on from where it was."))
		}
	}()
	// Without the lock: no run is the common case. While the gate has entries
	// pending, the stop is the gate's alone (docs/testhook.md).
	st, err := loadRun(runFile(r.dir, r.session))
	if err != nil || st == nil || !r.answers(st) || queue.Open(r.dir).HasPending(queue.Scope{Session: r.session}) {
		return err
	}
	return r.stopAnswer(in, st.Auto)
}

// answers reports whether this stop answers st's current test: handed out, in this turn if known.
func (r *runner) answers(st *State) bool {
	return st.current() != nil && st.Issued && (st.Turn == "" || r.turn == "" || st.Turn == r.turn)
}

// errText is an error, then its hints, as the person reads it in the client.
func errText(lead string, err error) string {
	lines := []string{joinSome(": ", "testhook", lead, err.Error())}
	if h, ok := errors.AsType[*cli.Hinted](err); ok {
		lines = append(lines, h.Hints...)
	}
	return strings.Join(lines, "\n")
}

// stopAnswer keeps a stop's answer for a manual validate, or records an auto run's and blocks with the next test.
func (r *runner) stopAnswer(in *hook.Input, auto bool) error {
	now, judged := utcNow(), -1 // -1: no result recorded
	var skipped []int
	st, err := r.update(func(st *State) (bool, error) {
		if !r.answers(st) || st.Auto != auto {
			return false, nil
		}
		if !auto {
			st.Answer = cli.Clip(in.LastAssistantMessage, maxKept, clipped)
			return true, nil
		}
		prior := 0
		if in.StopHookActive {
			prior = st.Streak
		}
		judged, skipped = st.validate(in.LastAssistantMessage, now)
		switch {
		case st.Mode == Completed:
			st.Streak = 0
		case prior+1 >= r.blockCap:
			st.Streak, st.Paused, st.Pauses = 0, true, append(st.Pauses, judged)
		default:
			st.Streak, st.Issued, st.Turn, st.Since = prior+1, true, r.turn, now
		}
		return true, nil
	})
	switch {
	case errors.Is(err, errNoRun): // gone since stopHook read it
		return nil
	case err != nil || judged < 0:
		return err
	case st.Mode == Completed || st.Paused:
		msg := r.say("stopped", textData{State: st, Judged: judged})
		return r.answer.Write(hook.Output{SystemMessage: joinSome(" ", msg, r.finish(st))})
	}
	lead := r.say("lead", textData{State: st, Judged: judged, Skipped: skipped})
	return r.answer.Write(hook.Block(r.say("brief", textData{State: st, Lead: lead})))
}

// start queues the tests file's tests that the filters choose as the session's run.
func (r *runner) start(req request) (reply, error) {
	path, err := r.testsFile(req.file)
	if err != nil {
		return reply{}, cli.WithHint(err, "write one (see docs/testhook.md), or name it with --file")
	}
	suite, err := Load(path, r.root)
	if ps, ok := errors.AsType[config.Problems](err); ok {
		err = cli.WithHint(fmt.Errorf("%s: %s", project.Display(r.root, path), cli.Plural(len(ps), "mistake", "mistakes")), ps.Lines()...)
	}
	var tests []Test
	if err == nil {
		tests, err = selectTests(suite, req.filters)
	}
	if err != nil {
		return reply{}, err
	}
	report := project.Display(r.root, filepath.Join(filepath.Dir(path), "report.md"))
	st := newState(r.session, suite, tests, req.filters, report, req.auto, utcNow())
	ctx := ""
	if req.auto && r.hook {
		// The slash command's turn carries the first test: every stop after it is an answer.
		st.Issued, st.Turn = true, r.turn
		ctx = r.say("brief", textData{State: st})
	}
	var old *State
	err = r.locked(func(path string) error {
		old, _ = loadRun(path) // replaced, readable or not
		return queue.WriteJSON(path, st)
	})
	return reply{text: r.say("start", textData{State: st, Old: old}), context: ctx}, err
}

// selectTests keeps the tests the filters match, unless one needs a variable only a left-out test saves.
func selectTests(s *Suite, f Filters) ([]Test, error) {
	tests := slices.DeleteFunc(slices.Clone(s.Tests), func(t Test) bool { return !f.match(&t) })
	if len(tests) == 0 {
		var cats, tags []string
		for _, t := range s.Tests {
			cats = append(cats, t.Category)
			tags = append(tags, t.Tags...)
		}
		return nil, cli.WithHint(fmt.Errorf("no test of %s matches the filters (%s)", s.File, f),
			"categories: "+orNone(cats), "tags: "+orNone(tags))
	}
	l := &loader{file: s.File}
	unsaved(tests, func(i int, n string) {
		if j := saverOf(s.Tests, n); j >= 0 {
			t, u := &tests[i], &s.Tests[j]
			l.add(t.Line, testKey(t.ID), fmt.Sprintf("uses ${%s}, saved by test %q, which the filters leave out", n, u.ID),
				fmt.Sprintf("add --category %s, or choose filters that keep %q", u.Category, u.ID))
		}
	})
	if len(l.problems) > 0 {
		return nil, cli.WithHint(fmt.Errorf("%s: the filters (%s) break a variable chain", s.File, f), l.problems.Lines()...)
	}
	return tests, nil
}

// orNone lists s, sorted and without repeats, or says "none".
func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	slices.Sort(s)
	return strings.Join(slices.Compact(s), ", ")
}

// next hands out the current test; asking again changes nothing.
func (r *runner) next(request) (reply, error) {
	st, err := r.update(func(st *State) (bool, error) {
		if st.current() == nil || st.Issued && !st.Paused && st.Streak == 0 && st.Turn == r.turn {
			return false, nil // handed out already
		}
		if !st.Issued {
			st.Since = utcNow()
		}
		// The person asked: a new turn, whose blocked stops count from 0.
		st.Issued, st.Turn, st.Paused, st.Streak = true, r.turn, false, 0
		return true, nil
	})
	if err != nil {
		return reply{}, err
	}
	if st.current() == nil {
		return reply{text: r.say("end", textData{State: st})}, nil
	}
	return reply{text: st.handout(), context: r.say("brief", textData{State: st})}, nil
}

// record skips the current test or validates req's text (else the agent's last answer).
func (r *runner) record(req request) (reply, error) {
	now := utcNow()
	var judged int
	var skipped []int
	st, err := r.update(func(st *State) (bool, error) {
		t := st.current()
		switch {
		case t == nil:
			return false, r.noCurrent(st)
		case req.name == "skip":
			judged, skipped = st.finish(&Result{Status: Skipped, Reason: "skipped by the user"}, now)
		case req.hasText:
			judged, skipped = st.validate(req.text, now)
		case st.Answer != "":
			judged, skipped = st.validate(st.Answer, now)
		default:
			return false, usageError{fmt.Errorf("validate needs the answer to check: no answer from the agent is kept for test %q; use %s TEXT", t.ID, r.word("validate"))}
		}
		return true, nil
	})
	if err != nil {
		return reply{}, err
	}
	after := r.say("after", textData{State: st, Judged: judged, Skipped: skipped})
	return reply{text: joinSome("\n", after, r.finish(st))}, nil
}

// retry runs the test named, else the last failed, else the last skipped, again.
func (r *runner) retry(req request) (reply, error) {
	var skipped []int
	st, err := r.update(func(st *State) (bool, error) {
		if st.Mode == Aborted {
			return false, r.noCurrent(st)
		}
		i := st.lastRetryable()
		if len(req.args) == 1 {
			if i = st.index(req.args[0]); i < 0 {
				return false, fmt.Errorf("no test %q in this run", req.args[0])
			}
			if st.Results[i] == nil {
				return false, fmt.Errorf("test %q has not run yet", req.args[0])
			}
		} else if i < 0 {
			return false, errors.New("nothing to retry: no test failed or was skipped")
		}
		// The run runs again from test i, without the variables it saved.
		st.Results[i], st.Mode, st.Completed, st.Paused = nil, Running, time.Time{}, false
		maps.DeleteFunc(st.Vars, func(_ string, v Var) bool { return v.Test == st.Tests[i].ID })
		skipped = st.advance(utcNow())
		return true, nil
	})
	if err != nil {
		return reply{}, err
	}
	return reply{text: r.say("retried", textData{State: st, Skipped: skipped})}, nil
}

// abort ends the run where it stands.
func (r *runner) abort(request) (reply, error) {
	st, err := r.update(func(st *State) (bool, error) {
		if st.Mode != Running {
			return false, fmt.Errorf("the run is already %s", st.Mode)
		}
		st.Mode, st.Completed, st.Issued, st.Paused = Aborted, utcNow(), false, false
		return true, nil
	})
	if err != nil {
		return reply{}, err
	}
	return reply{text: fmt.Sprintf("Aborted the run of %s: %s.\n%s writes the report of what ran.", st.File, st.counts(), r.word("report"))}, nil
}

// show answers status or vars: the text of that name on the run as it stands.
func (r *runner) show(req request) (reply, error) {
	st, err := r.load()
	if err != nil {
		return reply{}, err
	}
	return reply{text: r.say(req.name, textData{State: st})}, nil
}

// report writes the Markdown report, and JUnit XML when asked.
func (r *runner) report(req request) (reply, error) {
	st, err := r.load()
	if err != nil {
		return reply{}, err
	}
	md := r.rootPath(st.Report)
	if req.markdown != "" {
		md = r.path(req.markdown)
	}
	if err := r.writeOut(md, "report.md.tmpl", st); err != nil {
		return reply{}, fmt.Errorf("writing the report: %w", err)
	}
	written := []string{project.Display(r.root, md)}
	if req.junit != "" {
		path := r.path(req.junit)
		if err := r.writeOut(path, "junit.xml.tmpl", st); err != nil {
			return reply{}, fmt.Errorf("writing the JUnit report: %w", err)
		}
		written = append(written, project.Display(r.root, path))
	}
	rep := reply{text: r.say("report", textData{State: st, Written: written})}
	if c := st.counts(); c.Failed > 0 {
		rep.exit = fmt.Errorf("%d of %d tests failed", c.Failed, c.Total)
	}
	return rep, nil
}

// finish writes the report of a run that just completed, and says where.
func (r *runner) finish(st *State) string {
	if st.Mode != Completed {
		return ""
	}
	if err := r.writeOut(r.rootPath(st.Report), "report.md.tmpl", st); err != nil {
		return "The report could not be written: " + err.Error()
	}
	return "Report: " + st.Report
}

// writeOut writes st as report template name makes it, crash-safe, creating its folder.
func (r *runner) writeOut(path, name string, st *State) error {
	data, err := r.render(name, st)
	if err == nil {
		err = os.MkdirAll(filepath.Dir(path), 0o755)
	}
	if err == nil {
		err = queue.WriteFile(path, data)
	}
	return err
}

// load reads the session's run, which must exist, without the lock.
func (r *runner) load() (*State, error) {
	st, err := loadRun(runFile(r.dir, r.session))
	if err == nil && st == nil {
		err = errNoRun
	}
	return st, err
}

func (r *runner) noCurrent(st *State) error {
	if st.Mode == Aborted {
		return cli.WithHint(errors.New("the run was aborted"), "start a new one with "+r.word("init"))
	}
	return cli.WithHint(fmt.Errorf("the run is complete: %s", st.counts()), r.word("report")+" writes the report; "+r.word("retry")+" runs a failed test again")
}

func joinSome(sep string, parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(s string) bool { return s == "" }), sep)
}
