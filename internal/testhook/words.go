package testhook

import (
	"flag"
	"io"
	"slices"
	"strings"
	"unicode"

	"github.com/stopgate/stopgate/internal/cli"
)

// The commands, by canonical name, and the short forms that stand for them.
var aliases = map[string]string{
	"init": "init", "next": "next", "n": "next", "validate": "validate", "v": "validate",
	"skip": "skip", "s": "skip", "retry": "retry", "status": "status", "report": "report",
	"vars": "vars", "abort": "abort", "a": "abort",
}

// request is one command, from the command line or a prompt, with every
// command's flags; each command accepts only its own.
type request struct {
	name  string   // canonical
	slash bool     // /run-tests, typed in Claude Code
	args  []string // positional
	// text is validate's answer; hasText is false when none was given, and
	// the answer the agent gave last is used.
	text       string
	hasText    bool
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

// usageError is a mistake in how a command was written: exit 2 on the
// command line.
type usageError string

func (e usageError) Error() string { return string(e) }

// parseRequest parses name's flags and positional arguments. session and
// config, when not nil, are bound to --session and --config, which every
// command accepts on the command line.
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

// parsePrompt reads a prompt typed in Claude Code as a runner command. ok
// is false for anything else, which the runner must leave alone: the whole
// prompt must be the command, so "next, refactor the parser" or "skip the
// tests" are prompts for the agent. /run-tests is always the runner's, and
// a mistake in its flags is reported (err).
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
