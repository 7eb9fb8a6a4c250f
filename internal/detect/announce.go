package detect

import (
	"fmt"
	"strings"

	"github.com/stopgate/stopgate/internal/config"
)

// Announcement tells the agent, when it picks up a mapped prompt, what will
// be checked before it may stop: acceptance criteria up front cost fewer
// blocked stops than criteria discovered at the end.
func Announcement(cfg *config.Config, maps []*config.Mapping) (string, error) {
	var b strings.Builder
	for _, m := range maps {
		fmt.Fprintf(&b, "stopgate: before you stop, the prompt %q will be checked:\n", m.Prompt)
		for _, name := range m.Validators {
			v, err := cfg.Validator(name)
			if err != nil {
				return "", err
			}
			if v == nil {
				continue // cannot happen in a config that loaded
			}
			fmt.Fprintf(&b, "- %s: %s\n", name, Criterion(v))
		}
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// Criterion describes a validator in one line: its fix when it has one,
// else what it checks.
func Criterion(v *config.Validator) string {
	if v.Fix != "" {
		return v.Fix
	}
	if v.Run != "" {
		return fmt.Sprintf("the check `%s` must pass", v.Run)
	}
	if v.IsDiff() {
		return diffCriterion(v.Diff)
	}
	parts := []string{v.File + " must exist"}
	if v.Contains != "" {
		parts = append(parts, fmt.Sprintf("contain %q", v.Contains))
	}
	if v.NotContains != "" {
		parts = append(parts, fmt.Sprintf("not contain %q", v.NotContains))
	}
	if v.Regex != "" {
		parts = append(parts, "match "+v.Regex)
	}
	return strings.Join(parts, ", ")
}

// diffCriterion says what a diff check wants, since the prompt was armed.
func diffCriterion(d config.Diff) string {
	var parts []string
	if len(d.Changed) > 0 {
		parts = append(parts, strings.Join(d.Changed, ", ")+" must change")
	}
	in := strings.Join(d.In, ", ")
	if d.AddedLacks != "" {
		parts = append(parts, fmt.Sprintf("no line added in %s may match %s", in, d.AddedLacks))
	}
	if d.AddedMatches != "" {
		parts = append(parts, fmt.Sprintf("a line added in %s must match %s", in, d.AddedMatches))
	}
	return strings.Join(parts, "; ") + " (since this prompt was read)"
}
