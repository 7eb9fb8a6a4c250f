package stop

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/stopgate/stopgate/internal/cli"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/hook"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/reconcile"
)

// blockPrefix starts every block reason: the client's record of the
// blocks it fed back is counted by it (package reconcile).
const blockPrefix = hook.BlockPrefix

// blockClose follows the last failure of a block reason, and failurePrefix
// starts the line of each failing check: reconcile.passedAt reads them.
const (
	blockClose    = reconcile.BlockClose
	failurePrefix = reconcile.FailurePrefix
)

// blockReason is the remediation text the agent receives: the failures,
// then what to do next.
func blockReason(cfg *config.Config, v *Verdict) string {
	return checksReason(cfg, v, fmt.Sprintf("%s: %s.\n", blockPrefix, failedCount(v)),
		fmt.Sprintf(blockClose+" (Blocked stop %d of %d: after that the session halts and the user is told.)", v.Blocks, cfg.Settings.MaxBlocks), "")
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

// observeReason is what the user sees, in observe mode, of a stop that
// would have been blocked or halted; the agent is not told.
func observeReason(cfg *config.Config, v *Verdict) string {
	what := map[Kind]string{Block: "blocked", Halt: "halted"}[v.Observed]
	return checksReason(cfg, v, fmt.Sprintf("stopgate (observe mode) would have %s this stop: %s.\n", what, failedCount(v)), "",
		"\nNothing was blocked: [settings] mode = \"observe\" records this in the outcome log (gate stats). Remove the line to enforce.")
}

// failedCount counts the failed checks, and apart from them the judges
// that gave no verdict: those are not failures of the work.
func failedCount(v *Verdict) string {
	n, none := 0, 0
	for _, c := range v.Failed() {
		switch {
		case c.Result.Stopped: // fail_fast's: listed apart (stoppedNote)
		case c.Result.Unavailable:
			none++
		default:
			n++
		}
	}
	var parts []string
	switch {
	case n == 1:
		parts = append(parts, "1 check failed")
	case n > 1 || none == 0:
		parts = append(parts, fmt.Sprintf("%d checks failed", n))
	}
	if none > 0 {
		parts = append(parts, cli.Plural(none, "judge", "judges")+" unavailable (no verdict: not a failure of the work)")
	}
	return strings.Join(parts, ", ")
}

// noJudgeHalts reports whether a judge whose on_unavailable is "halt"
// gave no verdict.
func noJudgeHalts(v *Verdict) bool {
	for _, c := range v.Failed() {
		if c.Result.Unavailable && c.Validator.Judge.OnUnavailable == config.OnFailureHalt {
			return true
		}
	}
	return false
}

// checksReason is the reason of a stop whose checks failed: head; for each
// failing validator the prompt, the validator, its output as
// validator.Result.Shown shows it, and its fix; close, which follows the
// last failure; the checks taken as passed without running, and since
// when (the agent must know they were not run again, and why); tail.
func checksReason(cfg *config.Config, v *Verdict, head, close, tail string) string {
	var b strings.Builder
	b.WriteString(head + failures(cfg, v).Error() + close)
	first := true
	for _, c := range v.Checks {
		u := c.Unchanged
		if u == nil {
			continue
		}
		if first {
			b.WriteString("\n\nNot run again, nothing they depend on changed since they passed in this session:")
			first = false
		}
		fmt.Fprintf(&b, "\n✔ prompt %s, validator %q: unchanged since %s (passed)", quoted(c.Prompts), c.Validator.Name, u.Since.Local().Format(time.TimeOnly))
	}
	b.WriteString(skippedNote(v))
	b.WriteString(stoppedNote(v))
	b.WriteString(tail)
	return b.String()
}

// failures gathers the stop's failed checks, in order, each told as
// failure tells it.
func failures(cfg *config.Config, v *Verdict) error {
	errs := &multierror.Error{ErrorFormat: func(es []error) string {
		var b strings.Builder
		for _, e := range es {
			b.WriteString(e.Error())
		}
		return b.String()
	}}
	for _, c := range v.Failed() {
		if !c.Result.Stopped {
			errs = multierror.Append(errs, failure{c, cfg})
		}
	}
	return errs
}

// stoppedChecks are the checks fail_fast stopped: not failures, not passes.
func stoppedChecks(v *Verdict) []Check {
	var out []Check
	for _, c := range v.Checks {
		if c.Result.Stopped {
			out = append(out, c)
		}
	}
	return out
}

// stoppedNote lists the checks fail_fast stopped, so the agent knows they
// still have to pass.
func stoppedNote(v *Verdict) string {
	var b strings.Builder
	for _, c := range stoppedChecks(v) {
		fmt.Fprintf(&b, "\n– prompt %s, validator %q: not run to its end", quoted(c.Prompts), c.Validator.Name)
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n\nNot run (fail_fast = true: stopped at the first failure; they run again at the next stop):" + b.String()
}

// failure is one failed check as a reason tells it: the prompt, the
// validator, its output as validator.Result.Shown shows it, and its fix.
type failure struct {
	c   Check
	cfg *config.Config
}

func (f failure) Error() string {
	var b strings.Builder
	r := f.c.Result
	fmt.Fprintf(&b, "\n%s%s, validator %q", failurePrefix, quoted(f.c.Prompts), f.c.Validator.Name)
	if r.Problem != "" || r.ExitCode > 0 {
		// A run validator's failure says how it ended; a file
		// validator's output says what is wrong with the file.
		fmt.Fprintf(&b, ": %s", r.Summary())
	}
	b.WriteString("\n")
	if r.Unavailable {
		b.WriteString("  The judge gave no verdict it could verify: the work was neither passed nor failed by it. Stopping again asks again.\n")
	}
	for _, line := range r.Shown(f.cfg.Settings.OutputLines, f.cfg.Settings.Output) {
		b.WriteString("  | " + line + "\n")
	}
	if f.c.Validator.Fix != "" && !r.Unavailable {
		b.WriteString("  Fix: " + f.c.Validator.Fix + "\n")
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

// vanishedReason is what the user sees when armed prompts lost their
// mapping: which prompts, where their mapping stood, and how to clear an
// entry whose mapping was removed on purpose.
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

// pendingReason is the halt of a stop whose mappings.toml is gone while n
// prompts are still queued.
func pendingReason(n int) string {
	return fmt.Sprintf("stopgate: %s is missing, but %d prompt(s) are pending for this session; restore it (the agent must not remove its own gate)",
		project.ConfigName, n)
}

// takenUpReason is the halt of a stop whose mappings.toml is gone or
// empty while the record shows the agent took up what can be a prompt.
func takenUpReason(taken string) string {
	return fmt.Sprintf("stopgate: %s is missing or empty, and the session's transcript shows %s since its last passing stop: what it arms cannot be told without the config. Restore %s (git checkout %s) and continue the session; the agent must not remove its own gate. (To remove stopgate from the project, remove its hooks too.)",
		project.ConfigName, taken, project.ConfigName, project.ConfigName)
}
