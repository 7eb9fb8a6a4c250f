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

// ChangedFilesVar names, in a validator's environment, a file of the
// paths changed since its prompts were armed, NUL-separated; empty when
// that is unknown (no record of the tree at arming: armed by an older
// stopgate, rebuilt from the transcript, gate run).
const ChangedFilesVar = validator.ChangedFilesVar

// scope tells each check the files changed since its prompts were armed
// (ChangedFilesVar in specs[i].Env) and marks Skipped the checks that
// when_changed leaves out. The tree is read now, before any validator
// runs. done removes the files written.
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
		specs[i].Env = append(specs[i].Env, ChangedFilesVar+"="+path)
	}
	return func() {
		for _, p := range written {
			os.Remove(p)
		}
	}
}

// writeList writes files, NUL-separated, to the state dir, where neither
// the tree of ChangedSince nor reuse's fingerprint looks, and returns its
// path; "" (unknown) when it cannot. The path is the same at every stop
// of the scope for the validator: reuse hashes the variables a validator
// gets.
func writeList(cfg *config.Config, e queue.Entry, name string, files []string) string {
	sum := sha256.Sum256([]byte(e.Session + "\x00" + e.AgentID + "\x00" + name))
	path := filepath.Join(cfg.StateDir(), ".changed-"+hex.EncodeToString(sum[:8]))
	if atomicfile.Write(path, []byte(strings.Join(files, "\x00")), atomicfile.Options{TempPrefix: ".changed-tmp-", NoSync: true}) != nil {
		return ""
	}
	return path
}

// skipped says why c is not run: for each of its prompts, its mapping's
// or its own when_changed selects none of the files changed since that
// prompt was armed. "" runs it.
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

// selects reports whether pats (nil: every file) select one of files. A
// pattern that does not compile selects: the check runs.
func selects(pats, files []string) bool {
	set, err := pattern.Compile(pats)
	if pats == nil || err != nil {
		return true
	}
	return slices.ContainsFunc(files, set.Match)
}

// skippedNote lists the checks when_changed skipped, for the reason the
// agent and the user read: a check not run must never read as passed.
func skippedNote(v *Verdict) string {
	var b strings.Builder
	for _, c := range v.Checks {
		if c.Skipped != "" {
			fmt.Fprintf(&b, "\n– prompt %s, validator %q: skipped, %s", quoted(c.Prompts), c.Validator.Name, c.Skipped)
		}
	}
	if b.Len() == 0 {
		return ""
	}
	return "\n\nNot run (when_changed):" + b.String()
}
