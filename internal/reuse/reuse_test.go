package reuse

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/validator"
)

// TestToRun: the one decision of which validators run. A pass is reused
// only with the same spec, program and inputs, recorded in the past.
func TestToRun(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "a.go"), []byte("package a\n"), 0o644)
	os.WriteFile(filepath.Join(root, "check.sh"), []byte("exit 0\n"), 0o755)
	cfg := &config.Config{Root: root}
	unit := &config.Validator{Name: "unit", ValidatorKeys: config.ValidatorKeys{Run: "sh check.sh"}, Timeout: time.Minute}
	file := &config.Validator{Name: "file", ValidatorKeys: config.ValidatorKeys{File: "a.go"}}
	vs := []*config.Validator{unit, file}
	specs := []validator.Spec{{Name: "unit", Env: []string{"STOPGATE_PROMPT=p"}}, {Name: "file"}}
	tree, err := Take(context.Background(), root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	stop := func(rec *record, tree *Tree) *Stop {
		r := &Stop{cfg: cfg, vs: vs, rec: rec, tree: tree, now: now, keys: make([]*key, 2)}
		if tree != nil {
			k, _ := r.key(unit, specs[0], tree)
			r.keys[0] = &k
		}
		return r
	}
	r := stop(nil, tree)
	base, err := r.key(unit, specs[0], tree)
	if err != nil {
		t.Fatal(err)
	}
	off, _ := Start(cfg, Use{}, vs, specs, time.Time{})
	other := func(f func(k *key)) key { k := base; f(&k); return k }
	for _, tc := range []struct {
		name  string
		r     *Stop
		reuse bool
	}{
		{"reuse off", off, false},
		{"no record", stop(nil, tree), false},
		{"no fingerprint", stop(rec(base, now.Add(-time.Minute)), nil), false},
		{"unchanged", stop(rec(base, now.Add(-time.Minute)), tree), true},
		{"passed in the future", stop(rec(base, now.Add(time.Minute)), tree), false},
		{"spec changed", stop(rec(other(func(k *key) { k.Spec = "x" }), now), tree), false},
		{"program changed", stop(rec(other(func(k *key) { k.Program = "x" }), now), tree), false},
		{"inputs changed", stop(rec(other(func(k *key) { k.Inputs = "x" }), now), tree), false},
	} {
		unchanged := tc.r.toRun()
		if got := unchanged[0] != nil; got != tc.reuse {
			t.Errorf("%s: reused = %v, want %v", tc.name, got, tc.reuse)
		}
		if unchanged[1] != nil || tc.r.keys[1] != nil {
			t.Errorf("%s: the file validator was taken as unchanged", tc.name)
		}
	}
	// The spec counts the variables the validator gets and its timeout.
	if k2, _ := r.key(unit, validator.Spec{Env: []string{"STOPGATE_PROMPT=q"}}, tree); k2 == base {
		t.Error("another prompt's variables left the key as it was")
	}
	longer := *unit
	longer.Timeout = time.Hour
	if k2, _ := r.key(&longer, specs[0], tree); k2 == base {
		t.Error("another timeout left the key as it was")
	}
	os.WriteFile(filepath.Join(root, "check.sh"), []byte("exit 1\n"), 0o755)
	if k2, _ := r.key(unit, specs[0], tree); k2.Program == base.Program {
		t.Error("a rewritten program left the key as it was")
	}
}

func rec(k key, passed time.Time) *record {
	return &record{Validators: map[string]pass{"unit": {key: k, Passed: passed}}}
}

// TestRecordBound: a record verifies only in its own scope, under its key.
func TestRecordBound(t *testing.T) {
	dir := t.TempDir()
	key, err := sealKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	s1 := queue.Scope{Session: "s1"}
	r := record{Session: "s1", Validators: map[string]pass{"unit": {Passed: time.Now().UTC()}}}
	r.MAC = r.seal(key)
	os.WriteFile(recordPath(dir, s1), mustJSON(t, r), 0o600)
	if loadRecord(dir, s1, key) == nil {
		t.Fatal("a sealed record did not verify")
	}
	// Copied to another scope's place.
	s2 := queue.Scope{Session: "s1", Agent: "a1"}
	os.WriteFile(recordPath(dir, s2), mustJSON(t, r), 0o600)
	if loadRecord(dir, s2, key) != nil {
		t.Error("another scope's record verified")
	}
	// Another key.
	if loadRecord(dir, s1, make([]byte, 32)) != nil {
		t.Error("a record verified under another key")
	}
	if k2, err := sealKey(dir); err != nil || string(k2) != string(key) {
		t.Errorf("the key changed: %v", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
