package stop

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/queue"
)

// noteChanges records in v which of the gate's own inputs (mappings.toml,
// the programs its run validators execute) changed since each entry was
// armed: the checks ran as they are now, and a check that passes because
// it was rewritten must not pass in silence. A block or halt adds the note
// to its reason; a pass carries it as a system message for the user.
func (v *Verdict) noteChanges(c *config.Compiled, entries []queue.Entry) {
	byPath := map[string][]string{} // changed input → prompts armed before the change
	var paths []string
	for _, e := range entries {
		if e.Inputs == nil {
			continue
		}
		for _, path := range config.Inputs(e.Inputs).Changed(c.Root, c.Key(), c.File) {
			if _, ok := byPath[path]; !ok {
				paths = append(paths, path)
			}
			byPath[path] = append(byPath[path], fmt.Sprintf("%q", e.Prompt))
		}
	}
	if len(paths) == 0 {
		return
	}
	slices.Sort(paths)
	var b strings.Builder
	b.WriteString("stopgate: the checks' own inputs changed since their prompts were armed in this session:")
	for _, p := range paths {
		fmt.Fprintf(&b, "\n- %s (prompt %s)", p, strings.Join(byPath[p], ", "))
	}
	b.WriteString("\nThe checks ran as the files are now. If the agent changed them, review the change (git diff) before trusting this stop.")
	v.Changed = b.String()
	if v.Kind != Pass {
		v.Reason += "\n\n" + v.Changed
	}
}
