package stop

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/queue"
)

// changes says which of the gate's own inputs (mappings.toml, the programs
// run validators execute) changed since each entry was armed ("": none): a
// check that passes because it was rewritten must not pass in silence.
func changes(c *config.Config, queued, reconciled []queue.Entry) string {
	byPath := map[string][]string{} // changed input → prompts armed before the change
	var paths []string
	for i, e := range slices.Concat(queued, reconciled) {
		for _, path := range changedInputs(c, e, i >= len(queued)) {
			if _, ok := byPath[path]; !ok {
				paths = append(paths, path)
			}
			byPath[path] = append(byPath[path], fmt.Sprintf("%q", e.Prompt))
		}
	}
	if len(paths) == 0 {
		return ""
	}
	slices.Sort(paths)
	var b strings.Builder
	b.WriteString("stopgate: the checks' own inputs changed since their prompts were armed in this session:")
	for _, p := range paths {
		fmt.Fprintf(&b, "\n- %s (prompt %s)", p, strings.Join(byPath[p], ", "))
	}
	b.WriteString("\nThe checks ran as the files are now. If the agent changed them, review the change (git diff) before trusting this stop.")
	return b.String()
}

// changedInputs returns the inputs of e changed since it was armed: by hash
// for a queued entry, by change time for one reconciled from the transcript
// (hashed only now; none when the transcript gave the read no time).
func changedInputs(c *config.Config, e queue.Entry, reconciled bool) []string {
	in := config.Inputs(e.Inputs)
	switch {
	case in == nil:
		return nil
	case reconciled && e.Created.IsZero():
		return nil
	case reconciled:
		return in.ChangedSince(c.Root, e.Created)
	}
	return in.Changed(c.Root, c.Key(), c.File)
}
