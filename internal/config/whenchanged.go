package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/pattern"
)

// whenChanged checks the when_changed key of a mapping or validator at
// key: gitignore-style patterns, as in. A list that selects nothing would
// skip the check at every stop, so it is refused.
func (p *parser) whenChanged(key string, raw *[]string) []string {
	if raw == nil {
		return nil
	}
	key += ".when_changed"
	const hint = `gitignore-style patterns of the files whose change runs the check: "*.go", "/go.mod", "src/**"`
	if !slices.ContainsFunc(*raw, func(g string) bool { return !strings.HasPrefix(g, "!") }) {
		p.add(key, "selects nothing", hint)
	}
	for _, g := range *raw {
		if err := pattern.Check(g); err != nil {
			p.add(key, fmt.Sprintf("%q %v", g, err), hint)
		}
	}
	return *raw
}
