package gate

import (
	"context"
	"fmt"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/stop"
)

// runSession is the session id validators see under `gate run`.
const runSession = "gate-run"

type runJSON struct {
	Passed     bool            `json:"passed"`
	Validators []validatorJSON `json:"validators"`
}

type validatorJSON struct {
	Name       string   `json:"name"`
	Prompts    []string `json:"prompts"`
	Passed     bool     `json:"passed"`
	Result     string   `json:"result"`
	Problem    string   `json:"problem,omitempty"`
	ExitCode   int      `json:"exit_code"`
	DurationMS float64  `json:"duration_ms"`
	Output     string   `json:"output"`
	Fix        string   `json:"fix,omitempty"`
}

// runRun is `gate run PROMPT... | --all`: the validators now, by the gate's Decide, queue untouched.
func runRun(env *cli.Env, args []string) error {
	fl := flags("run")
	configFile := configFlag(fl)
	asJSON := jsonFlag(fl)
	all := fl.Bool("all", false, "run every mapped prompt's validators")
	prompts, err := parse(env, fl, args)
	if err != nil {
		return err
	}
	if *all == (len(prompts) > 0) {
		return usageError("run", fmt.Errorf("name the prompts to run, or --all"))
	}
	ws := workspaceOf(env, *configFile)
	cfg, err := ws.load()
	if err != nil {
		return err
	}
	var keys []string
	if *all {
		for _, m := range cfg.Mappings {
			keys = append(keys, m.Prompt)
		}
		if len(keys) == 0 {
			return fmt.Errorf("%s maps no prompts", ws.rel(cfg.File))
		}
	}
	for _, p := range prompts {
		found, err := resolvePrompt(env, cfg, p)
		if err != nil {
			return err
		}
		for _, m := range found {
			if !slices.Contains(keys, m.Prompt) {
				keys = append(keys, m.Prompt)
			}
		}
	}
	entries := make([]queue.Entry, len(keys))
	now := time.Now().UTC()
	for i, k := range keys {
		entries[i] = queue.Entry{Prompt: k, Session: runSession, Trigger: "gate run", Created: now, Updated: now}
	}
	// Ctrl-C kills the validators' process groups.
	ctx, release := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer release()
	v := stop.Decide(ctx, cfg, &hook.Input{SessionID: runSession, HookEventName: hook.Stop}, entries, 0, stop.NoDeadline)
	if *asJSON {
		out := runJSON{Passed: len(v.Failed()) == 0, Validators: []validatorJSON{}}
		for _, c := range v.Checks {
			r := c.Result
			out.Validators = append(out.Validators, validatorJSON{
				Name: c.Validator.Name, Prompts: c.Prompts, Passed: r.Passed, Result: r.Summary(), Problem: r.Problem,
				ExitCode: r.ExitCode, DurationMS: outcome.Millis(r.Duration), Output: r.Output, Fix: c.Validator.Fix,
			})
		}
		err = printJSON(env, out)
	} else {
		printRun(env, cfg, v)
	}
	if err == nil && len(v.Failed()) > 0 {
		err = cli.Exit(1)
	}
	return err
}

// resolvePrompt turns a key, a /command or a prompt file into mappings.
func resolvePrompt(env *cli.Env, cfg *config.Config, arg string) ([]*config.Mapping, error) {
	if m := cfg.Mapping(arg); m != nil {
		return []*config.Mapping{m}, nil
	}
	var maps []*config.Mapping
	var err error
	if isCommand(arg) {
		maps, err = cfg.MatchCommand(hook.SlashCommand(arg))
	} else {
		maps, err = cfg.MatchRead(readPath(env.Dir, arg))
	}
	if err != nil {
		return nil, err
	}
	if len(maps) == 0 {
		return nil, usageError("run", cli.WithHint(fmt.Errorf("%q is not a mapped prompt, /command or prompt file", arg), knownPrompts(cfg)))
	}
	return maps, nil
}

func knownPrompts(cfg *config.Config) string {
	var keys []string
	for i, m := range cfg.Mappings {
		if i == 8 {
			keys = append(keys, fmt.Sprintf("… %d more", len(cfg.Mappings)-i))
			break
		}
		keys = append(keys, m.Prompt)
	}
	if len(keys) == 0 {
		return "mappings.toml maps no prompts yet"
	}
	return "mapped prompts: " + strings.Join(keys, ", ")
}

// printRun shows each check and, of a failing one, its output and fix.
func printRun(env *cli.Env, cfg *config.Config, v *stop.Verdict) {
	p := paletteFor(env)
	w := env.Stdout
	var rows [][]string
	for _, c := range v.Checks {
		rows = append(rows, []string{c.Validator.Name, duration(c.Result.Duration)})
	}
	// Padded before colouring: escape codes have no width on screen.
	rows = aligned(rows)
	for i, c := range v.Checks {
		r := c.Result
		what := strings.Join(c.Prompts, ", ")
		if !r.Passed && (r.Problem != "" || r.ExitCode > 0) {
			what += ": " + r.Summary() // a file check's output says it all
		}
		fmt.Fprintf(w, "%s %s  %s  %s\n", p.mark(r.Passed), rows[i][0], p.dim(rows[i][1]), what)
		if r.Passed {
			continue
		}
		for _, line := range r.Shown(cfg.Settings.OutputLines, cfg.Settings.Output) {
			fmt.Fprintf(w, "    | %s\n", line)
		}
		if c.Validator.Fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", c.Validator.Fix)
		}
	}
	n, failed := len(v.Checks), len(v.Failed())
	switch {
	case n == 0:
		fmt.Fprintln(w, "no validators to run")
	case failed == 0:
		fmt.Fprintf(w, "%s passed\n", cli.Plural(n, "validator", "validators"))
	default:
		fmt.Fprintf(w, "%s: %d passed, %d failed\n", cli.Plural(n, "validator", "validators"), n-failed, failed)
	}
}

func duration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}
