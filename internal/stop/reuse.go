package stop

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/fingerprint"
	"github.com/stopgate/stopgate/internal/guard"
	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/regular"
	"github.com/stopgate/stopgate/internal/settings"
	"github.com/stopgate/stopgate/internal/validator"
)

// Reuse: a run validator that passed earlier in the session, in the same
// scope, is taken as passed, not run again, while nothing it depends on
// changed: its spec (what mappings.toml says of it, the variables it gets,
// the confinement), its program (the files its run line executes, as
// runline resolves them) and its inputs (the files its inputs patterns
// select, else the whole working tree: package fingerprint). Any doubt
// runs it: reuse off, a file validator (cheap, and its file is its whole
// input), no record or one that does not parse or verify, a clock that
// went backwards, a fingerprint that could not be taken, a program that
// could not be read. A failed validator is never recorded, so it always
// runs again.
//
// The record (reuserecord.go) is the verdict's bookkeeping, and an agent
// that could write it could pass a failing check. So it is on by default
// only where the state dir is walled off from the agent (ReusePolicy), and
// written only when every run validator of the stop ran confined (their
// code, often the agent's tests, cannot write the state dir then).

// ReusePolicy says whether reuse is on for a stop of client (its dialect's
// name; Claude Code's is "claude") in the project of cfg, and why: `gate
// check` prints the why, the stop acts on it. Off under reuse = false; on
// under reuse = true; unset, on only where the client's OS sandbox walls
// the state dir off from the agent's writes (Claude Code's sandbox with
// its deny rule for the state dir) and run validators are confined.
func ReusePolicy(cfg *config.Config, client, home string) (on bool, why string) {
	switch cfg.Settings.Reuse {
	case config.ReuseOff:
		return false, "off ([settings] reuse = false)"
	case config.ReuseOn:
		return true, "on ([settings] reuse = true: the record is trusted even where the agent could write the state dir)"
	}
	if client != "claude" {
		return false, "off: the state dir is not walled off from " + client + "'s agent (set [settings] reuse = true to reuse anyway)"
	}
	if cfg.Settings.Confine == config.ConfineOff {
		return false, "off: run validators are not confined (confine = false), so the code they run could write the record (set [settings] reuse = true to reuse anyway)"
	}
	rule := settings.DenyRule(filepath.ToSlash(cfg.Root), filepath.ToSlash(home), filepath.ToSlash(cfg.StateDir()), true)
	if walled, missing := settings.Walled(claudeSettings(cfg.Root, home), rule); !walled {
		return false, "off: the OS wall is not up around the state dir (" + missing + "); set [settings] reuse = true to reuse anyway"
	}
	// Confined, or the code they run could write a record the next stop
	// trusts (and keep the gate from removing it).
	if p := cfg.Settings.Protect; p != nil && len(p) == 0 && cfg.Settings.Confine != config.ConfineOn {
		return false, "off: protect = [] leaves run validators unconfined, so the code they run could write the record (set [settings] reuse = true to reuse anyway)"
	}
	if _, err := validator.Bwrap(); err != nil {
		return false, "off: run validators cannot be confined here (" + err.Error() + "), so the code they run could write the record (set [settings] reuse = true to reuse anyway)"
	}
	return true, "on: the OS wall keeps the agent from writing the state dir, where the record is"
}

// claudeSettings are Claude Code's settings files' texts in the order it
// reads them (nil for a file that is not there, or not a regular file:
// read through regular, a named pipe planted there cannot hold the stop,
// and a wall it hides is taken as down, so nothing is reused).
func claudeSettings(root, home string) [][]byte {
	files := guard.ClaudeSettings(root, home)
	out := make([][]byte, len(files))
	for i, f := range files {
		out[i], _ = regular.ReadFile(f.Path, math.MaxInt64)
	}
	return out
}

// reuse is one stop's reuse: the record read at its start, the tree's
// fingerprint taken before any validator runs.
type reuse struct {
	dir     string // the state dir
	scope   queue.Scope
	seal    []byte // the record's key
	rec     *reuseRecord
	tree    *fingerprint.Tree
	trusted bool // the policy is the default one: write only after confined runs
	now     time.Time
}

// Unchanged is a check taken as passed without running: nothing it
// depends on changed since it passed at Since, in a run of Duration.
type Unchanged struct {
	Since    time.Time
	Duration time.Duration
}

// toRun says which validators need running this stop: for each check,
// nil when it must run, else since when it is unchanged; and the key of
// each run validator as it stands before the run, for the record (nil
// when it could not be taken). r nil (reuse off, or `gate run`) runs
// them all.
func (r *reuse) toRun(cfg *config.Config, checks []Check, specs []validator.Spec) ([]*Unchanged, []*reuseKey) {
	out, keys := make([]*Unchanged, len(checks)), make([]*reuseKey, len(checks))
	if r == nil || r.tree == nil {
		return out, keys
	}
	for i, c := range checks {
		v := c.Validator
		if v.Run == "" {
			continue
		}
		key, err := r.key(cfg, v, specs[i])
		if err != nil {
			continue
		}
		keys[i] = &key
		if r.rec == nil {
			continue
		}
		prev, ok := r.rec.Validators[v.Name]
		if !ok || prev.Passed.After(r.now) || prev.reuseKey != key {
			continue
		}
		out[i] = &Unchanged{Since: prev.Passed, Duration: time.Duration(prev.DurationMS * float64(time.Millisecond))}
	}
	return out, keys
}

// key is what the validator's verdict depends on, as the record keeps it.
func (r *reuse) key(cfg *config.Config, v *config.Validator, s validator.Spec) (reuseKey, error) {
	ps, err := v.Patterns()
	if err != nil {
		return reuseKey{}, err
	}
	prog, err := programHash(v.Run, cfg.Root)
	if err != nil {
		return reuseKey{}, err
	}
	var match func(string) bool
	if ps != nil {
		match = ps.Match
	}
	return reuseKey{Spec: specHash(cfg, v, s), Program: prog, Inputs: r.tree.Sum(match)}, nil
}

// specHash hashes what the stop runs of v: its definition, the variables
// it gets, and how it is confined. The definition is the whole Validator,
// so that a field added to it is hashed with no more code, but for what
// the agent is told (fix) and where the file says it (line).
func specHash(cfg *config.Config, v *config.Validator, s validator.Spec) string {
	def := *v
	def.Fix, def.Line = "", 0
	b, _ := json.Marshal(struct {
		Validator     config.Validator
		Confine, Root string
		Env           []string
	}{def, cfg.Settings.Confine, cfg.Root, s.Env})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// programHash hashes the run line's inputs inside the project
// (config.RunInputs), whole. A program file it cannot read is an error.
func programHash(run, root string) (string, error) {
	in := config.Inputs{}
	if config.RunInputs(in, run, root, math.MaxInt64) {
		return "", fmt.Errorf("a program of %q cannot be read", run)
	}
	b, _ := json.Marshal(in) // keys sorted
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// wanted is what the fingerprint must hash for the validators of checks:
// the files their inputs select, all files when one has none; nil when
// none is a run validator.
func wanted(checks []Check) (want func(string) bool, any bool) {
	var sets []*pattern.Set
	for _, c := range checks {
		if c.Validator.Run == "" {
			continue
		}
		any = true
		ps, err := c.Validator.Patterns()
		if err != nil || ps == nil {
			return nil, true // the whole tree
		}
		sets = append(sets, ps)
	}
	return func(rel string) bool {
		return slices.ContainsFunc(sets, func(ps *pattern.Set) bool { return ps.Match(rel) })
	}, any
}
