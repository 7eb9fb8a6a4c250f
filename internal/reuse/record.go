package reuse

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/validator"
)

// The reuse record of a scope: the run validators that passed in it, each
// with what its verdict depended on. It lives in the state dir, in
// reuse/<hash of the scope>.json, sealed with an HMAC whose key is
// reuse/key (random, made at first use, readable by its owner only).
//
// The seal is no secret from an agent that can read the state dir; what
// keeps the agent from writing a record is the wall (Policy). The
// seal turns away what gets around it by copying: a record of another
// scope or another project, one edited by hand or by a validator that
// could not read the key, one torn by a crash. A record that fails any
// check is no record: every validator runs.
type record struct {
	Session    string          `json:"session_id"`
	Agent      string          `json:"agent_id,omitempty"`
	Validators map[string]pass `json:"validators"`
	MAC        string          `json:"mac"`
}

// pass is one validator's last pass in the scope.
type pass struct {
	key
	Passed     time.Time `json:"passed"`
	DurationMS float64   `json:"duration_ms"`
}

// key is what a verdict depended on: spec, program, inputs.
type key struct {
	Spec    string `json:"spec"`
	Program string `json:"program"`
	Inputs  string `json:"inputs"`
}

const recordDir = "reuse"

func recordPath(stateDir string, scope queue.Scope) string {
	sum := sha256.Sum256([]byte(scope.Session + "\x00" + scope.Agent))
	return filepath.Join(stateDir, recordDir, hex.EncodeToString(sum[:16])+".json")
}

// sealKey reads the state dir's key, making it when there is none (the
// gate that creates the file writes it; the others read it).
func sealKey(stateDir string) ([]byte, error) {
	path := filepath.Join(stateDir, recordDir, "key")
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600); err == nil {
		key := make([]byte, 32)
		rand.Read(key)
		_, err = f.Write(key)
		if cerr := f.Close(); err != nil || cerr != nil {
			return nil, errors.Join(err, cerr)
		}
	}
	key, err := os.ReadFile(path)
	if err == nil && len(key) != 32 {
		err = errors.New("reuse key: malformed")
	}
	return key, err
}

// seal is the record's MAC under key, over its JSON without the MAC.
func (r record) seal(key []byte) string {
	r.MAC = ""
	b, _ := json.Marshal(r)
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

// loadRecord reads the scope's record; nil when there is none or it fails
// a check.
func loadRecord(stateDir string, scope queue.Scope, key []byte) *record {
	data, err := os.ReadFile(recordPath(stateDir, scope))
	if err != nil {
		return nil
	}
	var r record
	if json.Unmarshal(data, &r) != nil || r.Session != scope.Session || r.Agent != scope.Agent ||
		!hmac.Equal([]byte(r.MAC), []byte(r.seal(key))) {
		return nil
	}
	return &r
}

// Finish records the stop's passes: each run validator that ran and
// passed (results, in the order of Start's validators), with what it
// depended on as the validators left it, when that did not change while
// it ran; each taken as unchanged, as it was; the scope's other
// validators as they were. A failed one is dropped. Under the default
// policy, a run validator that ran unconfined could have written the
// state dir: the record is removed instead. The tree is fingerprinted
// again by by (the gate's answer deadline): past it, nothing new is
// recorded.
func (r *Stop) Finish(results []validator.Result, by time.Time) {
	if r.seal == nil || r.tree == nil {
		return
	}
	path := recordPath(r.cfg.StateDir(), r.scope)
	for i := range r.vs {
		if r.ran(i) && r.trusted && !results[i].Confined {
			os.Remove(path)
			return
		}
	}
	after, err := r.take(by)
	if err != nil {
		return // the passes on record stand; this stop's are not recorded
	}
	next := record{Session: r.scope.Session, Agent: r.scope.Agent, Validators: map[string]pass{}}
	if r.rec != nil {
		maps.Copy(next.Validators, r.rec.Validators)
	}
	for i, v := range r.vs {
		if !r.ran(i) {
			continue
		}
		delete(next.Validators, v.Name)
		if k := r.still(i, after); k != nil && results[i].Passed {
			next.Validators[v.Name] = pass{key: *k, Passed: r.now.UTC(), DurationMS: outcome.Millis(results[i].Duration)}
		}
	}
	next.MAC = next.seal(r.seal)
	if err := queue.WriteJSON(path, next); err != nil {
		os.Remove(path) // a record half right is no record
	}
}

// still is validator i's key in after when nothing it depends on changed
// while it ran: the key it had before, and its inputs there stat and all;
// else nil.
func (r *Stop) still(i int, after *Tree) *key {
	v, before := r.vs[i], r.keys[i]
	k, err := r.key(v, r.specs[i], after)
	if before == nil || err != nil || k != *before {
		return nil
	}
	var match func(string) bool
	if ps, _ := v.Patterns(); ps != nil {
		match = ps.Match
	}
	if !r.tree.Still(after, match) {
		return nil
	}
	return &k
}

// ran is whether validator i is a run validator that ran this stop.
func (r *Stop) ran(i int) bool { return r.vs[i].Run != "" && r.reused[i] == nil }
