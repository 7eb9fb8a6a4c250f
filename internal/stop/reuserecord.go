package stop

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/stopgate/stopgate/internal/config"
	"github.com/stopgate/stopgate/internal/fingerprint"
	"github.com/stopgate/stopgate/internal/outcome"
	"github.com/stopgate/stopgate/internal/project"
	"github.com/stopgate/stopgate/internal/queue"
	"github.com/stopgate/stopgate/internal/statedir"
)

// The reuse record of a scope: the run validators that passed in it, each
// with what its verdict depended on. It lives in the state dir, in
// reuse/<hash of the scope>.json, sealed with an HMAC whose key is
// reuse/key (random, made at first use, readable by its owner only).
//
// The seal is no secret from an agent that can read the state dir; what
// keeps the agent from writing a record is the wall (ReusePolicy). The
// seal turns away what gets around it by copying: a record of another
// scope or another project, one edited by hand or by a validator that
// could not read the key, one torn by a crash. A record that fails any
// check is no record: every validator runs.
type reuseRecord struct {
	Session    string               `json:"session_id"`
	Agent      string               `json:"agent_id,omitempty"`
	Validators map[string]reusePass `json:"validators"`
	MAC        string               `json:"mac"`
}

// reusePass is one validator's last pass in the scope.
type reusePass struct {
	reuseKey
	Passed     time.Time `json:"passed"`
	DurationMS float64   `json:"duration_ms"`
}

// reuseKey is what a verdict depended on: spec, program, inputs.
type reuseKey struct {
	Spec    string `json:"spec"`
	Program string `json:"program"`
	Inputs  string `json:"inputs"`
}

const reuseDir = "reuse"

func recordPath(stateDir string, scope queue.Scope) string {
	sum := sha256.Sum256([]byte(scope.Session + "\x00" + scope.Agent))
	return filepath.Join(stateDir, reuseDir, hex.EncodeToString(sum[:16])+".json")
}

// sealKey reads the state dir's key, making it when there is none.
func sealKey(stateDir string) ([]byte, error) {
	path := filepath.Join(stateDir, reuseDir, "key")
	switch key, err := os.ReadFile(path); {
	case err == nil && len(key) == 32:
		return key, nil
	case err == nil:
		return nil, errors.New("reuse key: malformed")
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	rand.Read(key)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return sealKey(stateDir) // another gate made it first
	}
	if err != nil {
		return nil, err
	}
	_, err = f.Write(key)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return key, err
}

// seal is the record's MAC under key, over its JSON without the MAC.
func (r reuseRecord) seal(key []byte) string {
	r.MAC = ""
	b, _ := json.Marshal(r)
	m := hmac.New(sha256.New, key)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil))
}

// loadRecord reads the scope's record; nil when there is none or it fails
// a check.
func loadRecord(stateDir string, scope queue.Scope, key []byte) *reuseRecord {
	data, err := os.ReadFile(recordPath(stateDir, scope))
	if err != nil {
		return nil
	}
	var r reuseRecord
	if json.Unmarshal(data, &r) != nil || r.Session != scope.Session || r.Agent != scope.Agent ||
		!hmac.Equal([]byte(r.MAC), []byte(r.seal(key))) {
		return nil
	}
	return &r
}

// startReuse reads the scope's record and fingerprints what the run
// validators of checks depend on, before any of them runs. nil when
// there is nothing to reuse or record: no run validator, or the policy
// is off. A record or fingerprint it cannot have leaves the field nil:
// everything runs.
func startReuse(cfg *config.Config, ru reusing, checks []Check) *reuse {
	want, anyRun := wanted(checks)
	if !anyRun || !ru.on() {
		return nil
	}
	state := cfg.StateDir()
	r := &reuse{dir: state, scope: ru.scope, trusted: ru.trusted, now: time.Now()}
	key, err := sealKey(state)
	if err != nil {
		return r
	}
	r.seal = key
	r.rec = loadRecord(state, ru.scope, key)
	var skip []string
	if rel, inside := project.Rel(cfg.Root, state); inside {
		skip = append(skip, rel)
	}
	r.tree, _ = fingerprint.Take(cfg.Root, fingerprint.Options{Skip: skip, Want: want, Cache: filepath.Join(state, reuseDir, "stat-cache")})
	return r
}

// finish records the stop's passes: each run validator that ran and
// passed, with the key taken before it ran; each taken as unchanged, as it
// was; the scope's other validators as they were. A failed one is
// dropped. Under the default policy, a run validator that ran unconfined
// could have written the state dir: the record is removed instead.
func (r *reuse) finish(checks []Check, keys []*reuseKey) {
	if r == nil || r.seal == nil || r.tree == nil {
		return
	}
	path := recordPath(r.dir, r.scope)
	next := reuseRecord{Session: r.scope.Session, Agent: r.scope.Agent, Validators: map[string]reusePass{}}
	if r.rec != nil {
		maps.Copy(next.Validators, r.rec.Validators)
	}
	for i, c := range checks {
		name, res := c.Validator.Name, c.Result
		switch {
		case c.Unchanged != nil:
		case c.Validator.Run == "":
		case r.trusted && !res.Confined:
			os.Remove(path)
			return
		case res.Passed && keys[i] != nil:
			next.Validators[name] = reusePass{reuseKey: *keys[i], Passed: r.now.UTC(), DurationMS: outcome.Millis(res.Duration)}
		default:
			delete(next.Validators, name)
		}
	}
	next.MAC = next.seal(r.seal)
	if err := statedir.WriteJSON(path, next); err != nil {
		os.Remove(path) // a record half right is no record
	}
}
