// Package reuse lets a stop take a run validator that passed earlier in
// the session, in the same scope, as passed, not run again, while nothing
// it depends on changed: its spec (what mappings.toml says of it, the
// variables it gets, the confinement), its program (the files its run
// line executes, as shell.Files resolves them) and its inputs (the files its
// inputs patterns select, else the whole working tree: fingerprint.go).
// Any doubt runs it: reuse off, a file validator (cheap, and its file is
// its whole input), no record or one that does not parse or verify, a
// clock that went backwards, a fingerprint that could not be taken or
// not within half the time left before the gate must answer, a program
// that could not be read. A failed validator is never recorded, so it
// always runs again.
//
// A pass is recorded against the tree as the validators left it, and
// only when what the validator depends on did not change while it ran
// (not a file swapped for a clean one and back, not a program rewritten):
// else the tree it judged is not the one on record.
//
// The record (record.go) is the verdict's bookkeeping, and an agent that
// could write it could pass a failing check. So it is on by default only
// where the state dir is walled off from the agent (Policy), and written
// only when every run validator of the stop ran confined (their code,
// often the agent's tests, cannot write the state dir then).
package reuse

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"time"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/pattern"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/validator"
)

// Use is whether a stop reuses passes (Policy), for which scope, and
// whether under the default policy (Trusted: the wall stands for the
// record, so it is written only after confined runs). On is asked only of
// a stop that has a run validator to reuse: the policy reads the client's
// settings files. On nil: off.
type Use struct {
	On      func() bool
	Trusted bool
	Scope   queue.Scope
}

// Unchanged is a check taken as passed without running: nothing it
// depends on changed since it passed at Since, in a run of Duration.
type Unchanged struct {
	Since    time.Time
	Duration time.Duration
}

// Stop is one stop's reuse: the record read at its start, the tree's
// fingerprint taken before any validator runs, each run validator's key.
type Stop struct {
	cfg     *config.Config
	vs      []*config.Validator
	specs   []validator.Spec
	seal    []byte // the record's key
	rec     *record
	tree    *Tree
	opts    Options
	keys    []*key
	reused  []*Unchanged // ToRun's answer
	trusted bool         // the policy is the default one: write only after confined runs
	scope   queue.Scope
	now     time.Time
}

// Start reads the scope's record and fingerprints what the run
// validators vs (specs, what the stop runs of them) depend on, before any
// of them runs, giving the fingerprint half the time left before by (the
// gate's answer deadline; zero: no bound). With nothing to reuse (no run
// validator, or the policy off), or a record or fingerprint it cannot
// have, every validator runs.
func Start(cfg *config.Config, u Use, vs []*config.Validator, specs []validator.Spec, by time.Time) *Stop {
	r := &Stop{cfg: cfg, vs: vs, specs: specs, keys: make([]*key, len(vs)), reused: make([]*Unchanged, len(vs)), trusted: u.Trusted, scope: u.Scope, now: time.Now()}
	want, anyRun := wanted(vs)
	if !anyRun || u.On == nil || !u.On() {
		return r
	}
	state := cfg.StateDir()
	seal, err := sealKey(state)
	if err != nil {
		return r
	}
	r.seal, r.rec = seal, loadRecord(state, u.Scope, seal)
	r.opts = Options{Want: want, Cache: filepath.Join(state, recordDir, "stat-cache")}
	if rel, inside := project.Rel(cfg.Root, state); inside {
		r.opts.Skip = []string{rel}
	}
	if !by.IsZero() {
		by = r.now.Add(by.Sub(r.now) / 2) // the validators keep the other half
	}
	r.tree, _ = r.take(by)
	r.keyAll()
	return r
}

// keyAll takes each run validator's key in the tree before the run (nil
// when it could not be taken: it runs).
func (r *Stop) keyAll() {
	for i, v := range r.vs {
		if v.Run != "" && r.tree != nil {
			if k, err := r.key(v, r.specs[i], r.tree); err == nil {
				r.keys[i] = &k
			}
		}
	}
}

// take fingerprints the tree, giving up at by (zero: no bound).
func (r *Stop) take(by time.Time) (*Tree, error) {
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if !by.IsZero() {
		ctx, cancel = context.WithDeadline(ctx, by)
	}
	defer cancel()
	return Take(ctx, r.cfg.Root, r.opts)
}

// ToRun says, for each validator, nil when it must run, else since when
// it is unchanged.
func (r *Stop) ToRun() []*Unchanged {
	out := make([]*Unchanged, len(r.vs))
	r.reused = out
	if r.rec == nil {
		return out
	}
	for i, v := range r.vs {
		prev, ok := r.rec.Validators[v.Name]
		if r.keys[i] == nil || !ok || prev.Passed.After(r.now) || prev.key != *r.keys[i] {
			continue
		}
		out[i] = &Unchanged{Since: prev.Passed, Duration: time.Duration(prev.DurationMS * float64(time.Millisecond))}
	}
	return out
}

// key is what the validator's verdict depends on in tree.
func (r *Stop) key(v *config.Validator, s validator.Spec, tree *Tree) (key, error) {
	ps, err := v.Patterns()
	if err != nil {
		return key{}, err
	}
	prog, err := programHash(v.Run, r.cfg.Root)
	if err != nil {
		return key{}, err
	}
	var match func(string) bool
	if ps != nil {
		match = ps.Match
	}
	return key{Spec: specHash(r.cfg, v, s), Program: prog, Inputs: tree.Sum(match)}, nil
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

// wanted is what the fingerprint must hash for the validators vs: the
// files their inputs select, all files when one has none; any is whether
// one is a run validator.
func wanted(vs []*config.Validator) (want func(string) bool, any bool) {
	var sets []*pattern.Set
	for _, v := range vs {
		if v.Run == "" {
			continue
		}
		any = true
		ps, err := v.Patterns()
		if err != nil || ps == nil {
			return nil, true // the whole tree
		}
		sets = append(sets, ps)
	}
	return func(rel string) bool {
		return slices.ContainsFunc(sets, func(ps *pattern.Set) bool { return ps.Match(rel) })
	}, any
}
