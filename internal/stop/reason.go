package stop

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/reconcile"
)

// blockReason is what the agent receives; its prefix and close are what package reconcile reads the record by.
func blockReason(cfg *config.Config, v *Verdict) string {
	return checksReason(cfg, v, fmt.Sprintf("%s: %s.\n", hook.BlockPrefix, failedCount(v)),
		fmt.Sprintf(reconcile.BlockClose+" (Blocked stop %d of %d: after that the session halts and the user is told.)", v.Blocks, cfg.Settings.MaxBlocks), "")
}

// haltReason is what the user sees when the gate gives up on the agent.
func haltReason(cfg *config.Config, v *Verdict, prior int) string {
	head := fmt.Sprintf("stopgate halted the session: %s after %d blocked stops.\n", failedCount(v), prior)
	if v.Cause == CauseNoJudge {
		head = fmt.Sprintf("stopgate halted the session: a judge is unavailable, so the work could not be judged (on_unavailable = \"halt\"): %s.\n", failedCount(v))
	} else if cfg.Settings.OnFailure == config.OnFailureHalt {
		head = fmt.Sprintf("stopgate halted the session: %s (on_failure = \"halt\").\n", failedCount(v))
	}
	return checksReason(cfg, v, head, "", "\nThe pending entries are kept: inspect them in "+cfg.Settings.StateDir+", fix the work, and stop again.")
}

// observeReason is what the user sees of a stop observe mode would have blocked or halted.
func observeReason(cfg *config.Config, v *Verdict) string {
	what := map[Kind]string{Block: "blocked", Halt: "halted"}[v.Observed]
	return checksReason(cfg, v, fmt.Sprintf("stopgate (observe mode) would have %s this stop: %s.\n", what, failedCount(v)), "",
		"\nNothing was blocked: [settings] mode = \"observe\" records this in the outcome log (gate stats). Remove the line to enforce.")
}

// failedCount counts the failed checks, and apart the judges with no verdict (no failure of the work).
func failedCount(v *Verdict) string {
	n, none := 0, 0
	for _, c := range v.Failed() {
		switch {
		case c.Result.Stopped: // fail_fast's: listed apart
		case c.Result.Unavailable:
			none++
		default:
			n++
		}
	}
	var parts []string
	if n > 0 || none == 0 {
		parts = append(parts, cli.Plural(n, "check", "checks")+" failed")
	}
	if none > 0 {
		parts = append(parts, cli.Plural(none, "judge", "judges")+" unavailable (no verdict: not a failure of the work)")
	}
	return strings.Join(parts, ", ")
}

// noJudgeHalts reports whether a judge whose on_unavailable is "halt" gave no verdict.
func noJudgeHalts(v *Verdict) bool {
	return slices.ContainsFunc(v.Failed(), func(c Check) bool {
		return c.Result.Unavailable && c.Validator.Judge.OnUnavailable == config.OnFailureHalt
	})
}

// checksReason is head, the failures, close, the checks not run (never to read as passed), tail.
func checksReason(cfg *config.Config, v *Verdict, head, close, tail string) string {
	unchanged := listNote(v, "Not run again, nothing they depend on changed since they passed in this session:", func(c Check) string {
		if c.Unchanged == nil {
			return ""
		}
		return fmt.Sprintf("\n✔ prompt %s, validator %q: unchanged since %s (passed)", quoted(c.Prompts), c.Validator.Name, c.Unchanged.Since.Local().Format(time.TimeOnly))
	})
	stopped := listNote(v, "Not run (fail_fast = true: stopped at the first failure; they run again at the next stop):", func(c Check) string {
		if !c.Result.Stopped {
			return ""
		}
		return fmt.Sprintf("\n– prompt %s, validator %q: not run to its end", quoted(c.Prompts), c.Validator.Name)
	})
	return head + failures(cfg, v) + close + unchanged + skippedNote(v) + stopped + tail
}

// skippedNote lists the checks when_changed skipped.
func skippedNote(v *Verdict) string {
	return listNote(v, "Not run (when_changed):", func(c Check) string {
		if c.Skipped == "" {
			return ""
		}
		return fmt.Sprintf("\n– prompt %s, validator %q: skipped, %s", quoted(c.Prompts), c.Validator.Name, c.Skipped)
	})
}

// listNote is a paragraph of head and each check's line; "" when no check has one.
func listNote(v *Verdict, head string, line func(Check) string) string {
	var b strings.Builder
	for _, c := range v.Checks {
		b.WriteString(line(c))
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n\n" + head + b.String()
}

// failures tells each failed check but those fail_fast stopped: prompt, validator, output, fix.
func failures(cfg *config.Config, v *Verdict) string {
	var b strings.Builder
	for _, c := range v.Failed() {
		r := c.Result
		if r.Stopped {
			continue
		}
		fmt.Fprintf(&b, "\n%s%s, validator %q", reconcile.FailurePrefix, quoted(c.Prompts), c.Validator.Name)
		if r.Problem != "" || r.ExitCode > 0 {
			fmt.Fprintf(&b, ": %s", r.Summary()) // how a run ended; a file's output says what is wrong
		}
		b.WriteString("\n")
		if r.Unavailable {
			b.WriteString("  The judge gave no verdict it could verify: the work was neither passed nor failed by it. Stopping again asks again.\n")
		}
		for _, line := range r.Shown(cfg.Settings.OutputLines, cfg.Settings.Output) {
			b.WriteString("  | " + line + "\n")
		}
		if c.Validator.Fix != "" && !r.Unavailable {
			b.WriteString("  Fix: " + c.Validator.Fix + "\n")
		}
	}
	return b.String()
}

func quoted(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// vanishedReason is the halt of armed prompts that lost their mapping: where it stood, how to clear one.
func vanishedReason(cfg *config.Config, gone []queue.Entry) string {
	var b strings.Builder
	file := filepath.Base(cfg.File)
	b.WriteString("stopgate halted the session: ")
	if len(gone) == 1 {
		b.WriteString("a prompt armed in this session has lost its mapping")
	} else {
		fmt.Fprintf(&b, "%d prompts armed in this session have lost their mapping", len(gone))
	}
	if len(cfg.Mappings) == 0 {
		fmt.Fprintf(&b, " (%s has no [[mapping]] at all)", file)
	}
	b.WriteString(", so their checks cannot run and the stop cannot pass.\n")
	q := queue.Open(cfg.StateDir())
	for _, e := range gone {
		fmt.Fprintf(&b, "\n✘ prompt %q", e.Prompt)
		if e.Line > 0 {
			fmt.Fprintf(&b, ": its [[mapping]] at %s:%d is gone", file, e.Line)
		} else {
			fmt.Fprintf(&b, ": %s has no [[mapping]] for it", file)
		}
		fmt.Fprintf(&b, "\n  armed entry: %s\n", project.Display(cfg.Root, q.EntryPath(e)))
	}
	fmt.Fprintf(&b, "\nRestore the mapping in %s (the agent must not edit its own gate). If it was removed on purpose, remove the armed entry above, then stop again.", file)
	return b.String()
}
