package gate

import (
	"fmt"
	"strings"

	"github.com/stopgate/stopgate/internal/config"
)

// blockReason is the remediation text the agent receives: for each failing
// validator the prompt, the validator, the first output_lines lines of its
// output and its fix, then what to do next.
func blockReason(cfg *config.Config, v *Verdict) string {
	var b strings.Builder
	fmt.Fprintf(&b, "stopgate: you may not stop yet: %s.\n", failedCount(v))
	writeFailures(&b, cfg, v)
	fmt.Fprintf(&b, "\nFix each failure above, then finish again. (Blocked stop %d of %d: after that the session halts and the user is told.)", v.Blocks, cfg.Settings.MaxBlocks)
	return b.String()
}

// haltReason is what the user sees when the gate gives up on the agent.
func haltReason(cfg *config.Config, v *Verdict, prior int) string {
	var b strings.Builder
	if cfg.Settings.OnFailure == config.OnFailureHalt {
		fmt.Fprintf(&b, "stopgate halted the session: %s (on_failure = \"halt\").\n", failedCount(v))
	} else {
		fmt.Fprintf(&b, "stopgate halted the session: %s after %d blocked stops.\n", failedCount(v), prior)
	}
	writeFailures(&b, cfg, v)
	b.WriteString("\nThe pending entries are kept: inspect them in " + cfg.Settings.StateDir + ", fix the work, and stop again.")
	return b.String()
}

func failedCount(v *Verdict) string {
	n := 0
	for _, c := range v.Checks {
		if !c.Result.Passed {
			n++
		}
	}
	if n == 1 {
		return "1 check failed"
	}
	return fmt.Sprintf("%d checks failed", n)
}

func writeFailures(b *strings.Builder, cfg *config.Config, v *Verdict) {
	for _, c := range v.Checks {
		r := c.Result
		if r.Passed {
			continue
		}
		fmt.Fprintf(b, "\n✘ prompt %s, validator %q", quoted(c.Prompts), c.Validator.Name)
		if r.Problem != "" || r.ExitCode > 0 {
			// A run validator's failure says how it ended; a file
			// validator's output says what is wrong with the file.
			fmt.Fprintf(b, ": %s", r.Summary())
		}
		b.WriteString("\n")
		for _, line := range r.Lines(cfg.Settings.OutputLines) {
			b.WriteString("  | " + line + "\n")
		}
		if c.Validator.Fix != "" {
			b.WriteString("  Fix: " + c.Validator.Fix + "\n")
		}
	}
}

func quoted(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}
