package stop

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stopgate/stopgate/internal/atomicfile"
	"github.com/stopgate/stopgate/internal/baseline"
	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/validator"
)

// scope tells each check the files changed since its prompts were armed
// (validator.ChangedFilesVar in specs[i].Env; "" when unknown) and marks
// Skipped the checks when_changed leaves out, before any validator runs.
// done removes the files written.
func scope(cfg *config.Config, checks []Check, specs []validator.Spec, entries []queue.Entry) (done func()) {
	q := queue.Open(cfg.StateDir())
	records := make([]string, len(entries))
	for i, e := range entries {
		records[i] = q.BaselinePath(e)
	}
	changed := map[string][]string{} // prompt → changed files; nil: unknown
	for i, files := range baseline.ChangedSince(cfg.Root, records, []string{cfg.StateDir()}) {
		changed[entries[i].Prompt] = files
	}
	var written []string
	for i := range checks {
		c := &checks[i]
		var files []string
		known := true
		for _, p := range c.Prompts {
			known = known && changed[p] != nil
			files = append(files, changed[p]...)
		}
		path := ""
		if known {
			c.Skipped = skipped(cfg, c, changed)
			slices.Sort(files)
			path = writeList(cfg, entries[0], c.Validator.Name, slices.Compact(files))
			written = append(written, path)
		}
		specs[i].Env = append(specs[i].Env, validator.ChangedFilesVar+"="+path)
	}
	return func() {
		for _, p := range written {
			os.Remove(p)
		}
	}
}

// writeList writes files, NUL-separated, to the state dir (outside the
// trees ChangedSince and reuse read) and returns its path, "" when it
// cannot; the same path at every stop of the scope, as reuse hashes it.
func writeList(cfg *config.Config, e queue.Entry, name string, files []string) string {
	sum := sha256.Sum256([]byte(e.Session + "\x00" + e.AgentID + "\x00" + name))
	path := filepath.Join(cfg.StateDir(), ".changed-"+hex.EncodeToString(sum[:8]))
	if atomicfile.Write(path, []byte(strings.Join(files, "\x00")), atomicfile.Options{TempPrefix: ".changed-tmp-", NoSync: true}) != nil {
		return ""
	}
	return path
}

// skipped says why c is not run: for each of its prompts, its mapping's or
// its own when_changed selects none of the files changed. "" runs it.
func skipped(cfg *config.Config, c *Check, changed map[string][]string) string {
	var why []string
	for _, p := range c.Prompts {
		m := cfg.Mapping(p)
		switch {
		case !selects(m.WhenChanged, changed[p]):
			why = append(why, fmt.Sprintf("prompt %q's when_changed", p))
		case !selects(c.Validator.WhenChanged, changed[p]):
			why = append(why, "its when_changed")
		default:
			return ""
		}
	}
	slices.Sort(why)
	return "nothing matching " + strings.Join(slices.Compact(why), ", ") + " changed since the prompt was armed"
}

// selects reports whether pats (nil: every file; bad: the check runs)
// select one of files.
func selects(pats, files []string) bool {
	set, err := pattern.Compile(pats)
	if pats == nil || err != nil {
		return true
	}
	return slices.ContainsFunc(files, set.Match)
}
