package stop

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/fingerprint"
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
	unit := &config.Validator{Name: "unit", Run: "sh check.sh", Timeout: time.Minute}
	file := &config.Validator{Name: "file", File: "a.go"}
	checks := []Check{{Validator: unit}, {Validator: file}}
	specs := []validator.Spec{{Name: "unit", Env: []string{"STOPGATE_PROMPT=p"}}, {Name: "file"}}
	tree, err := fingerprint.Take(root, fingerprint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r := &reuse{tree: tree, now: now}
	key, err := r.key(cfg, unit, specs[0])
	if err != nil {
		t.Fatal(err)
	}
	other := func(f func(k *reuseKey)) reuseKey { k := key; f(&k); return k }
	for _, tc := range []struct {
		name  string
		r     *reuse
		reuse bool
	}{
		{"reuse off", nil, false},
		{"no record", &reuse{tree: tree, now: now}, false},
		{"no fingerprint", &reuse{rec: rec(key, now.Add(-time.Minute)), now: now}, false},
		{"unchanged", &reuse{tree: tree, rec: rec(key, now.Add(-time.Minute)), now: now}, true},
		{"passed in the future", &reuse{tree: tree, rec: rec(key, now.Add(time.Minute)), now: now}, false},
		{"spec changed", &reuse{tree: tree, rec: rec(other(func(k *reuseKey) { k.Spec = "x" }), now), now: now}, false},
		{"program changed", &reuse{tree: tree, rec: rec(other(func(k *reuseKey) { k.Program = "x" }), now), now: now}, false},
		{"inputs changed", &reuse{tree: tree, rec: rec(other(func(k *reuseKey) { k.Inputs = "x" }), now), now: now}, false},
	} {
		unchanged, keys := tc.r.toRun(cfg, checks, specs)
		if got := unchanged[0] != nil; got != tc.reuse {
			t.Errorf("%s: reused = %v, want %v", tc.name, got, tc.reuse)
		}
		if unchanged[1] != nil || keys[1] != nil {
			t.Errorf("%s: the file validator was taken as unchanged", tc.name)
		}
	}
	// The spec counts the variables the validator gets and its timeout.
	if k2, _ := r.key(cfg, unit, validator.Spec{Env: []string{"STOPGATE_PROMPT=q"}}); k2 == key {
		t.Error("another prompt's variables left the key as it was")
	}
	longer := *unit
	longer.Timeout = time.Hour
	if k2, _ := r.key(cfg, &longer, specs[0]); k2 == key {
		t.Error("another timeout left the key as it was")
	}
	os.WriteFile(filepath.Join(root, "check.sh"), []byte("exit 1\n"), 0o755)
	if k2, _ := r.key(cfg, unit, specs[0]); k2.Program == key.Program {
		t.Error("a rewritten program left the key as it was")
	}
}

func rec(k reuseKey, passed time.Time) *reuseRecord {
	return &reuseRecord{Validators: map[string]reusePass{"unit": {reuseKey: k, Passed: passed}}}
}

// TestRecordBound: a record verifies only in its own scope, under its key.
func TestRecordBound(t *testing.T) {
	dir := t.TempDir()
	key, err := sealKey(dir)
	if err != nil {
		t.Fatal(err)
	}
	s1 := queue.Scope{Session: "s1"}
	r := reuseRecord{Session: "s1", Validators: map[string]reusePass{"unit": {Passed: time.Now().UTC()}}}
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
