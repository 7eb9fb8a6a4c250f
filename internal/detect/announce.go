package detect

import (
	"fmt"
	"strings"

	"github.com/stopgate/stopgate/internal/config"
)

// Announcement tells the agent what will be checked before it may stop:
// criteria up front cost fewer blocked stops than criteria found at the end.
func Announcement(validator func(string) (*config.Validator, error), maps []*config.Mapping) (string, error) {
	var b strings.Builder
	for _, m := range maps {
		fmt.Fprintf(&b, "stopgate: before you stop, the prompt %q will be checked:\n", m.Prompt)
		for _, name := range m.Validators {
			v, err := validator(name)
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
	return v.Expects()
}
